// Golden tests of the OpenAI-client -> Anthropic-upstream translator on recorded wire samples (testdata/).
import { afterAll, describe, expect, it } from 'vitest';
import { openAIFromAnthropic } from './openai-anthropic.ts';
import { clientEvents, loadGolden, MODEL, refusal, TARGET, UPDATE, upstreamEvents } from '../testdata/golden.ts';

const golden = loadGolden('openai-anthropic');
const NOW = () => 1_767_225_600_000;
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('openai -> anthropic: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const frozen = structuredClone(c.client);
    const req = openAIFromAnthropic(c.client, NOW).request({ ...TARGET, provider: 'anthropic' }, MODEL);
    const got = { operation: req.operation, stream: req.stream, headers: req.headers, body: JSON.parse(req.body) as unknown };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
    expect(c.client).toEqual(frozen);
  });

  it('sends a later system message in `system`, never as a system turn, which Anthropic refuses', () => {
    const client = {
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: 'Answer in French.' },
        { role: 'user', content: 'Again' },
      ],
    };
    const body = JSON.parse(openAIFromAnthropic(client, NOW).request({ ...TARGET, provider: 'anthropic' }, MODEL).body) as {
      system: { text: string }[];
      messages: { role: string }[];
    };
    expect(body.system.map((b) => b.text)).toEqual(['Be brief.', 'Answer in French.']);
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'user']);
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the path', (c) => {
    const got = refusal(() => openAIFromAnthropic(c.client, NOW).request(TARGET, MODEL));
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
  });
});

describe('openai -> anthropic: responses', () => {
  it.each(golden.data.response)('$name', (c) => {
    const out = openAIFromAnthropic({}, NOW).response(JSON.stringify(c.upstream), 'public-model');
    const got = { body: JSON.parse(out.body) as unknown, usage: out.usage };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
  });
});

describe('openai -> anthropic: streams', () => {
  it.each(golden.data.stream)('$name', (c) => {
    const tr = openAIFromAnthropic(c.client ?? { stream: true }, NOW).stream('public-model');
    const text =
      upstreamEvents(c.upstream)
        .map((e) => tr.event(e))
        .join('') + (tr.complete && !tr.failed ? tr.finish() : '');
    const got = { events: clientEvents(text), usage: tr.usage(), complete: tr.complete, failed: tr.failed };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
  });

  it('ends a cut stream with an OpenAI error chunk', () => {
    const tr = openAIFromAnthropic({ stream: true }, NOW).stream('m');
    expect(clientEvents(tr.error('cut'))).toEqual([{ data: { error: { message: 'cut', type: 'api_error', param: null, code: 'upstream_stream_error' } } }]);
  });
});
