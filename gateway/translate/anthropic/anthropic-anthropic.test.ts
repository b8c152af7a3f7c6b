// Golden tests of the Anthropic pass-through on recorded wire samples (testdata/).
import { afterAll, describe, expect, it } from 'vitest';
import { anthropicCountTokensPassThrough, anthropicMessagesPassThrough } from './anthropic-anthropic.ts';
import { anthropicCountTokensEstimate, estimateInputTokens } from '../count-tokens.ts';
import { clientEvents, loadGolden, MODEL, TARGET, UPDATE, upstreamEvents } from '../testdata/golden.ts';

const golden = loadGolden('anthropic-anthropic');
const ANTHROPIC = { ...TARGET, provider: 'anthropic' as const };
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('anthropic -> anthropic', () => {
  it.each(golden.data.request)('request: $name', (c) => {
    const frozen = structuredClone(c.client);
    const req = anthropicMessagesPassThrough(c.client, c.headers ?? {}).request(ANTHROPIC, MODEL);
    const got = { operation: req.operation, stream: req.stream, headers: req.headers, body: JSON.parse(req.body) as unknown };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
    expect(c.client).toEqual(frozen);
  });

  it.each(golden.data.response)('response: $name', (c) => {
    const out = anthropicMessagesPassThrough({}, {}).response(JSON.stringify(c.upstream), 'public-model');
    const got = { body: JSON.parse(out.body) as unknown, usage: out.usage };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
  });

  it.each(golden.data.stream)('stream: $name', (c) => {
    const tr = anthropicMessagesPassThrough({ stream: true }, {}).stream('public-model');
    const text = upstreamEvents(c.upstream)
      .map((e) => tr.event(e))
      .join('');
    const got = { events: clientEvents(text), usage: tr.usage(), complete: tr.complete, failed: tr.failed };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
  });

  it('bounds the output of a stream cut before message_delta by the deltas seen', () => {
    const tr = anthropicMessagesPassThrough({ stream: true }, {}).stream('m');
    tr.event({ event: 'message_start', data: '{"type":"message_start","message":{"model":"x","usage":{"input_tokens":40,"output_tokens":1}}}' });
    for (let i = 0; i < 3; i++)
      tr.event({ event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"w "}}' });
    expect(tr.usage()).toEqual({ inputTokens: 40, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(tr.complete).toBe(false);
  });

  it('passes events other than message_start through byte for byte', () => {
    const tr = anthropicMessagesPassThrough({ stream: true }, {}).stream('m');
    const data = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\\nb"}}';
    expect(tr.event({ event: 'content_block_delta', data })).toBe(`event: content_block_delta\ndata: ${data}\n\n`);
  });
});

describe('count_tokens', () => {
  const body = {
    model: 'public-model',
    system: 'Be brief.',
    messages: [{ role: 'user', content: 'Hello, world' }],
    metadata: { task_type: 't', user_id: 'u' },
  };

  it('passes through to an Anthropic upstream, free of charge', () => {
    const t = anthropicCountTokensPassThrough(body, { version: '2023-06-01' });
    const req = t.request(ANTHROPIC, MODEL);
    expect(req).toMatchObject({ operation: 'count_tokens', stream: false, headers: { 'anthropic-version': '2023-06-01' } });
    expect(JSON.parse(req.body)).toEqual({ model: 'upstream-model', system: 'Be brief.', messages: body.messages });
    expect(t.response('{"input_tokens":14}', 'public-model')).toEqual({
      body: '{"input_tokens":14}',
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
  });

  it('is answered by the gateway for an OpenAI-protocol upstream, with an estimate', () => {
    const req = anthropicCountTokensEstimate(body).request(TARGET, MODEL);
    expect(req.local).toBe(JSON.stringify({ input_tokens: estimateInputTokens(body) }));
    // "Be brief." + "user"... : 9 + 12 characters (+ the role) -> a handful of tokens plus 4 per message
    expect(estimateInputTokens(body)).toBeGreaterThan(4);
    expect(estimateInputTokens(body)).toBeLessThan(20);
    const image = {
      ...body,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'x'.repeat(100_000) } }] }],
    };
    expect(estimateInputTokens(image)).toBeLessThan(2000); // an image costs a fixed estimate, not its base64 length
  });
});
