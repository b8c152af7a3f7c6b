// Golden tests of the Anthropic-client -> Bedrock-Converse-upstream translator on wire samples (testdata/converse/).
import { afterAll, describe, expect, it } from 'vitest';
import { anthropicFromConverse } from './anthropic-converse.ts';
import { countTokensTranslation } from '../select.ts';
import { answered, clientEvents, expectGolden, loadGolden, MODEL, refusal, streamed, TARGET, UPDATE, wire } from '../testdata/golden.ts';
import { deepFreeze } from '../testdata/freeze.ts';

const golden = loadGolden('converse/anthropic-converse');
const ID = (): string => 'msg_bdrk_0123456789abcdef';
const CONVERSE = { ...TARGET, provider: 'bedrock' as const, upstreamModel: 'mistral.mistral-large-2407-v1:0' };
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('anthropic -> converse: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const frozen = structuredClone(c.client);
    expectGolden(c, wire(anthropicFromConverse(deepFreeze(c.client), ID).request(CONVERSE, MODEL)));
    expect(c.client).toEqual(frozen);
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the field', (c) => {
    const frozen = structuredClone(c.client);
    expectGolden(
      c,
      refusal(() => anthropicFromConverse(deepFreeze(c.client), ID).request(CONVERSE, MODEL)),
    );
    expect(c.client).toEqual(frozen);
  });

  it('count_tokens is answered locally with the estimate', () => {
    const req = countTokensTranslation({ model: 'm', messages: [{ role: 'user', content: 'Hello there' }] }, {})('converse').request(CONVERSE, MODEL);
    expect(req.operation).toBe('count_tokens');
    expect(JSON.parse(req.local ?? '')).toEqual({ input_tokens: expect.any(Number) });
  });
});

describe('anthropic -> converse: answers', () => {
  it.each(golden.data.response)('$name', (c) => {
    expectGolden(c, answered(anthropicFromConverse({}, ID), c.upstream));
  });

  it('names the stop sequence that fired when the client gave exactly one', () => {
    const upstream = {
      output: { message: { role: 'assistant', content: [{ text: '1, 2, ' }] } },
      stopReason: 'stop_sequence',
      usage: { inputTokens: 1, outputTokens: 1 },
    };
    expect(answered(anthropicFromConverse({ stop_sequences: ['3'] }, ID), upstream).body).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: '3' });
    expect(answered(anthropicFromConverse({ stop_sequences: ['3', '4'] }, ID), upstream).body).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: null,
    });
  });
});

describe('anthropic -> converse: streams', () => {
  it.each(golden.data.stream)('$name', (c) => {
    expectGolden(c, streamed(anthropicFromConverse(c.client ?? { stream: true }, ID).stream('public-model'), c.upstream));
  });

  it('ends a cut stream with an Anthropic error event', () => {
    const tr = anthropicFromConverse({ stream: true }, ID).stream('m');
    expect(clientEvents(tr.error('The upstream closed the stream.'))).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'The upstream closed the stream.' } } },
    ]);
  });
});
