// Golden tests of the Anthropic-client -> OpenAI-upstream translator on recorded wire samples (testdata/).
import { afterAll, describe, expect, it } from 'vitest';
import { anthropicFromOpenAI } from './anthropic-openai.ts';
import { clientEvents, loadGolden, MODEL, refusal, TARGET, UPDATE, upstreamEvents } from '../testdata/golden.ts';

const golden = loadGolden('anthropic-openai');
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('anthropic -> openai: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const frozen = structuredClone(c.client);
    const req = anthropicFromOpenAI(c.client).request(TARGET, MODEL);
    const body = JSON.parse(req.body) as unknown;
    if (UPDATE) c.expected = { operation: req.operation, stream: req.stream, headers: req.headers, body };
    expect({ operation: req.operation, stream: req.stream, headers: req.headers, body }).toEqual(c.expected);
    expect(c.client).toEqual(frozen); // the client's body is never mutated: a retry re-runs the translator
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the path', (c) => {
    const got = refusal(() => anthropicFromOpenAI(c.client).request(TARGET, MODEL));
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
  });
});

describe('anthropic -> openai: responses', () => {
  it.each(golden.data.response)('$name', (c) => {
    const out = anthropicFromOpenAI({}).response(JSON.stringify(c.upstream), 'public-model');
    const got = { body: JSON.parse(out.body) as unknown, usage: out.usage };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
  });
});

describe('anthropic -> openai: streams', () => {
  it.each(golden.data.stream)('$name', (c) => {
    const tr = anthropicFromOpenAI({ stream: true }).stream('public-model');
    const text =
      upstreamEvents(c.upstream)
        .map((e) => tr.event(e))
        .join('') + (tr.complete && !tr.failed ? tr.finish() : '');
    const got = { events: clientEvents(text), usage: tr.usage(), complete: tr.complete, failed: tr.failed };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
  });

  it('ends a cut stream with an Anthropic error event', () => {
    const tr = anthropicFromOpenAI({ stream: true }).stream('m');
    expect(clientEvents(tr.error('The upstream closed the stream.'))).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'The upstream closed the stream.' } } },
    ]);
  });
});
