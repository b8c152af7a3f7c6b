// Golden tests of the OpenAI-client -> Gemini-upstream translator on Gemini wire samples (testdata/gemini/): requests
// both to the Gemini API and Vertex AI, answers and streams checked against OpenAI's published description and
// accumulated by the openai SDK's own stream helper.
import { afterAll, describe, expect, it } from 'vitest';
import { expectConforms } from '../../../test/helpers/openapi.ts';
import { openAIFromGemini } from './openai-gemini.ts';
import { clientEvents, expectGolden, loadGolden, MODEL, refusal, streamed, UPDATE, upstreamEvents, wire } from '../testdata/golden.ts';
import { deepFreeze, openAIAccumulated, targetOf } from '../testdata/gemini/harness.ts';
import type OpenAI from 'openai';

const golden = loadGolden('gemini/openai-gemini');
const NOW = (): number => 1_767_225_600_000;
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('openai -> gemini: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const client = deepFreeze(structuredClone(c.client));
    const req = openAIFromGemini(client, NOW).request(targetOf(c), MODEL);
    expectGolden(c, wire(req));
    expect(req.body).not.toContain('upstream-model'); // the model is in the URL, never in the body
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the field', (c) => {
    expectGolden(
      c,
      refusal(() => openAIFromGemini(deepFreeze(structuredClone(c.client)), NOW).request(targetOf(c), MODEL)),
    );
  });
});

describe('openai -> gemini: answers', () => {
  it.each(golden.data.response)('$name', (c) => {
    const out = openAIFromGemini({}, NOW).response(JSON.stringify(c.upstream), 'public-model');
    const body = JSON.parse(out.body) as unknown;
    expectConforms('CreateChatCompletionResponse', body);
    expectGolden(c, { body, usage: out.usage });
  });
});

describe('openai -> gemini: streams', () => {
  it.each(golden.data.stream)('$name', async (c) => {
    const tr = openAIFromGemini(c.client ?? { stream: true }, NOW).stream('public-model');
    const got = streamed(tr, c.upstream) as { events: Array<{ data: unknown }>; complete: boolean; failed: boolean };
    expectGolden(c, got);
    if (!got.complete || got.failed) return;
    for (const e of got.events) if (e.data !== '[DONE]') expectConforms('CreateChatCompletionStreamResponse', e.data);
    // The openai SDK's accumulator reads the stream: the finish reason and text the chunks carried.
    const tr2 = openAIFromGemini(c.client ?? { stream: true }, NOW).stream('public-model');
    const final = await openAIAccumulated(
      upstreamEvents(c.upstream)
        .map((e) => tr2.event(e))
        .join(''),
    );
    const chunks = got.events.map((e) => e.data as { choices?: Array<{ delta: { content?: string }; finish_reason: string | null }> });
    expect(final.choices[0]?.finish_reason).toBe(chunks.flatMap((d) => d.choices ?? []).find((ch) => ch.finish_reason)?.finish_reason);
    expect(final.choices[0]?.message.content ?? '').toBe(
      chunks
        .flatMap((d) => d.choices ?? [])
        .map((ch) => ch.delta.content ?? '')
        .join(''),
    );
  });

  it('the openai SDK accumulates a streamed tool call into the answer the unstreamed call gives', async () => {
    const c = golden.data.stream.find((s) => s.name.startsWith('function calls'))!;
    const tr = openAIFromGemini({ stream: true }, NOW).stream('public-model');
    const text = upstreamEvents(c.upstream)
      .map((e) => tr.event(e))
      .join('');
    const final = await openAIAccumulated(text);
    const last = JSON.parse(c.upstream.at(-1) as string) as { candidates: Array<{ content: { parts: unknown[] } }> };
    const whole = {
      ...last,
      candidates: [{ ...last.candidates[0], content: { role: 'model', parts: [{ text: 'Checking.' }, ...last.candidates[0]!.content.parts] } }],
    };
    const unstreamed = JSON.parse(openAIFromGemini({}, NOW).response(JSON.stringify(whole), 'public-model').body) as OpenAI.Chat.Completions.ChatCompletion;
    expect(final.choices[0]?.message.content).toBe('Checking.');
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
    expect(final.choices[0]?.message.tool_calls).toEqual(unstreamed.choices[0]?.message.tool_calls);
  });

  it('the openai SDK raises the error chunk of a failed stream', async () => {
    const c = golden.data.stream.find((s) => s.name.startsWith('an error object'))!;
    const tr = openAIFromGemini({ stream: true }, NOW).stream('public-model');
    const text = upstreamEvents(c.upstream)
      .map((e) => tr.event(e))
      .join('');
    await expect(openAIAccumulated(text)).rejects.toThrow(/overloaded/);
  });

  it('ends a cut stream with an OpenAI error chunk', () => {
    const tr = openAIFromGemini({ stream: true }, NOW).stream('m');
    expect(clientEvents(tr.error('cut'))).toEqual([{ data: { error: { message: 'cut', type: 'api_error', param: null, code: 'upstream_stream_error' } } }]);
  });
});
