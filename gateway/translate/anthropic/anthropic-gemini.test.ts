// Golden tests of the Anthropic-client -> Gemini-upstream translator on Gemini wire samples (testdata/gemini/);
// every complete stream is also accumulated by @anthropic-ai/sdk's MessageStream into the answer its events carried.
import { afterAll, describe, expect, it } from 'vitest';
import { anthropicFromGemini } from './anthropic-gemini.ts';
import { clientEvents, expectGolden, loadGolden, MODEL, refusal, streamed, UPDATE, upstreamEvents, wire } from '../testdata/golden.ts';
import { anthropicAccumulated, deepFreeze, targetOf } from '../testdata/gemini/harness.ts';

const golden = loadGolden('gemini/anthropic-gemini');
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('anthropic -> gemini: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const req = anthropicFromGemini(deepFreeze(structuredClone(c.client))).request(targetOf(c), MODEL);
    expectGolden(c, wire(req));
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the field', (c) => {
    expectGolden(
      c,
      refusal(() => anthropicFromGemini(deepFreeze(structuredClone(c.client))).request(targetOf(c), MODEL)),
    );
  });
});

describe('anthropic -> gemini: answers', () => {
  it.each(golden.data.response)('$name', (c) => {
    const out = anthropicFromGemini({}).response(JSON.stringify(c.upstream), 'public-model');
    expectGolden(c, { body: JSON.parse(out.body) as unknown, usage: out.usage });
  });
});

describe('anthropic -> gemini: streams', () => {
  it.each(golden.data.stream)('$name', async (c) => {
    const tr = anthropicFromGemini({ stream: true }).stream('public-model');
    const got = streamed(tr, c.upstream) as { complete: boolean; failed: boolean };
    expectGolden(c, got);
    const tr2 = anthropicFromGemini({ stream: true }).stream('public-model');
    const text = upstreamEvents(c.upstream)
      .map((e) => tr2.event(e))
      .join('');
    if (got.failed) {
      await expect(anthropicAccumulated(text)).rejects.toThrow(/exhausted/);
      return;
    }
    // The SDK's accumulator builds the same message as the unstreamed answer to the chunks merged.
    const message = await anthropicAccumulated(text);
    const parts = c.upstream.flatMap((u) => {
      const r = JSON.parse(u as string) as { candidates?: Array<{ content?: { parts?: unknown[] } }> };
      return r.candidates?.[0]?.content?.parts ?? [];
    });
    const last = JSON.parse(c.upstream.at(-1) as string) as { candidates?: Array<Record<string, unknown>> };
    const whole = last.candidates ? { ...last, candidates: [{ ...last.candidates[0], content: { role: 'model', parts } }] } : last;
    const unstreamed = JSON.parse(anthropicFromGemini({}).response(JSON.stringify(whole), 'public-model').body) as typeof message;
    expect(message.content).toEqual(unstreamed.content);
    expect(message.stop_reason).toBe(unstreamed.stop_reason);
    expect(message.usage).toMatchObject(unstreamed.usage);
  });

  it('ends a cut stream with an Anthropic error event', () => {
    const tr = anthropicFromGemini({ stream: true }).stream('m');
    expect(clientEvents(tr.error('The upstream closed the stream.'))).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'The upstream closed the stream.' } } },
    ]);
  });
});
