// Golden tests of the Responses-client -> Gemini-upstream translator on Gemini wire samples (testdata/gemini/):
// answers and every streamed event checked against OpenAI's published description, complete streams accumulated by
// the openai SDK's ResponseStream.
import { afterAll, describe, expect, it } from 'vitest';
import { expectConforms } from '../../../test/helpers/openapi.ts';
import { responsesFromGemini } from './responses-gemini.ts';
import { answered, expectGolden, loadGolden, MODEL, refusal, streamed, UPDATE, upstreamEvents, wire } from '../testdata/golden.ts';
import { deepFreeze, responsesAccumulated, targetOf } from '../testdata/gemini/harness.ts';

const golden = loadGolden('gemini/responses-gemini');
const NOW = (): number => 1_767_225_600_000;
const CLIENT = { model: 'public-model', input: 'hi', tools: [{ type: 'namespace', name: 'agents', tools: [{ type: 'function', name: 'close_agent' }] }] };
/** The client's namespace tool, echoed in `tools`, is newer than the pinned description: checked without the echo. */
function echoless(v: unknown): unknown {
  const o = structuredClone(v) as { tools?: unknown; response?: { tools?: unknown } };
  if (o.tools) o.tools = [];
  if (o.response?.tools) o.response.tools = [];
  return o;
}
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('responses -> gemini: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const req = responsesFromGemini(deepFreeze(structuredClone(c.client)), NOW).request(targetOf(c), MODEL);
    expectGolden(c, { ...wire(req), droppedTools: req.droppedTools });
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the field', (c) => {
    expectGolden(
      c,
      refusal(() => responsesFromGemini(deepFreeze(structuredClone(c.client)), NOW).request(targetOf(c), MODEL)),
    );
  });
});

describe('responses -> gemini: answers', () => {
  it.each(golden.data.response)('$name', (c) => {
    const t = responsesFromGemini(CLIENT, NOW);
    t.request(targetOf({}), MODEL);
    const got = answered(t, c.upstream) as { body: unknown };
    expectConforms('Response', echoless(got.body));
    expectGolden(c, got);
  });
});

describe('responses -> gemini: streams', () => {
  it.each(golden.data.stream)('$name', async (c) => {
    const run = () => {
      const t = responsesFromGemini({ ...CLIENT, stream: true }, NOW);
      t.request(targetOf({}), MODEL);
      return t.stream('public-model');
    };
    const got = streamed(run(), c.upstream) as { events: Array<{ data: unknown }>; failed: boolean };
    expectGolden(c, got);
    for (const e of got.events) expectConforms('ResponseStreamEvent', echoless(e.data));
    const tr = run();
    const text = upstreamEvents(c.upstream)
      .map((e) => tr.event(e))
      .join('');
    if (got.failed) {
      await expect(responsesAccumulated(text)).rejects.toThrow(/Internal error/);
      return;
    }
    const final = await responsesAccumulated(text);
    const last = got.events.at(-1)?.data as { response: { output: unknown; status: string } };
    expect(final.status).toBe(last.response.status);
    expect(final.output).toMatchObject(last.response.output as object[]); // the SDK adds its parsed fields
  });
});
