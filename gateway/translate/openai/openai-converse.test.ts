// Golden tests of the OpenAI-Chat-client -> Bedrock-Converse-upstream translator on wire samples
// (testdata/converse/): requests, refusals, answers and streams (Converse events as the transport names them).
import { afterAll, describe, expect, it } from 'vitest';
import { openAIFromConverse } from './openai-converse.ts';
import { answered, clientEvents, expectGolden, loadGolden, MODEL, refusal, streamed, TARGET, UPDATE, wire } from '../testdata/golden.ts';
import { deepFreeze } from '../testdata/freeze.ts';

const golden = loadGolden('converse/openai-converse');
const NOW = (): number => 1_767_225_600_000;
const ID = (): string => 'msg_bdrk_0123456789abcdef';
const CONVERSE = { ...TARGET, provider: 'bedrock' as const, upstreamModel: 'meta.llama3-1-8b-instruct-v1:0' };
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('openai -> converse: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const frozen = structuredClone(c.client);
    expectGolden(c, wire(openAIFromConverse(deepFreeze(c.client), NOW, ID).request(CONVERSE, MODEL)));
    expect(c.client).toEqual(frozen);
  });

  it('sends no model in the body (the transport puts it in the URL) and always a maxTokens', () => {
    const body = JSON.parse(openAIFromConverse({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] }).request(CONVERSE, MODEL).body) as Record<
      string,
      unknown
    >;
    expect(body.model).toBeUndefined();
    expect(body.inferenceConfig).toEqual({ maxTokens: MODEL.maxOutputTokens });
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the field', (c) => {
    const frozen = structuredClone(c.client);
    expectGolden(
      c,
      refusal(() => openAIFromConverse(deepFreeze(c.client), NOW, ID).request(CONVERSE, MODEL)),
    );
    expect(c.client).toEqual(frozen);
  });
});

describe('openai -> converse: answers', () => {
  it.each(golden.data.response)('$name', (c) => {
    expectGolden(c, answered(openAIFromConverse({}, NOW, ID), c.upstream));
  });

  it('names the stop sequence that fired when the client gave one', () => {
    const t = openAIFromConverse({ stop: ['3'] }, NOW, ID);
    const out = t.response(
      JSON.stringify({
        output: { message: { role: 'assistant', content: [{ text: '1, 2, ' }] } },
        stopReason: 'stop_sequence',
        usage: { inputTokens: 1, outputTokens: 1 },
      }),
      'm',
    );
    expect((JSON.parse(out.body) as { choices: Array<{ finish_reason: string }> }).choices[0]?.finish_reason).toBe('stop');
  });
});

describe('openai -> converse: streams', () => {
  it.each(golden.data.stream)('$name', (c) => {
    expectGolden(c, streamed(openAIFromConverse(c.client ?? { stream: true }, NOW, ID).stream('public-model'), c.upstream));
  });

  it('ends a cut stream with an OpenAI error chunk', () => {
    const tr = openAIFromConverse({ stream: true }, NOW, ID).stream('m');
    expect(clientEvents(tr.error('cut'))).toEqual([{ data: { error: { message: 'cut', type: 'api_error', param: null, code: 'upstream_stream_error' } } }]);
  });
});

describe('converse error bodies', () => {
  it.each([
    [
      'a Bedrock exception',
      '{"message":"Too many tokens, please wait before trying again."}',
      429,
      'upstream answered 429: Too many tokens, please wait before trying again.',
    ],
    [
      'a namespaced __type',
      '{"__type":"com.amazon.coral.validate#ValidationException","message":"Malformed input request"}',
      400,
      'upstream answered 400: ValidationException: Malformed input request',
    ],
    ['Message capitalised', '{"Message":"User is not authorized"}', 403, 'upstream answered 403: User is not authorized'],
    ['not JSON', '<html>bad gateway</html>', 502, 'upstream answered 502'],
  ])('%s', (_name, body, status, expected) => {
    expect(openAIFromConverse({}).errorMessage(body, status)).toBe(expected);
  });
});
