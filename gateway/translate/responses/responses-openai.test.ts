// Golden tests of the Responses-client -> Chat-Completions-upstream translator on wire samples (testdata/), and of
// the stateless refusals every upstream shares.
import { afterAll, describe, expect, it } from 'vitest';
import { refuseStateful } from './responses-refuse.ts';
import { responsesFromOpenAI } from './responses-openai.ts';
import { answered, clientEvents, expectGolden, loadGolden, MODEL, refusal, streamed, TARGET, UPDATE, wire } from '../testdata/golden.ts';

const golden = loadGolden('responses-openai');
const NOW = (): number => 1_767_225_600_000;
// Refusals are recorded on a route with hostedTools: reject, so the built-in tools' cases show that refusal (the
// default, drop, is in hosted-tools.test.ts).
const STRICT = { ...MODEL, hostedTools: 'reject' as const };
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('responses -> chat completions: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const frozen = structuredClone(c.client);
    expectGolden(c, wire(responsesFromOpenAI(c.client, NOW).request(TARGET, STRICT)));
    expect(c.client).toEqual(frozen);
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the field', (c) => {
    const frozen = structuredClone(c.client);
    expectGolden(
      c,
      refusal(() => responsesFromOpenAI(c.client, NOW).request(TARGET, STRICT)),
    );
    expect(c.client).toEqual(frozen);
  });
});

describe('responses -> chat completions: answers', () => {
  it.each(golden.data.response)('$name', (c) => {
    const client = { model: 'public-model', input: 'hi', tools: [{ type: 'namespace', name: 'agents', tools: [{ type: 'function', name: 'close_agent' }] }] };
    const t = responsesFromOpenAI(client, NOW);
    t.request(TARGET, MODEL); // builds the tool-name map the answer reads
    expectGolden(c, answered(t, c.upstream));
  });
});

describe('responses -> chat completions: streams', () => {
  it.each(golden.data.stream)('$name', (c) => {
    const t = responsesFromOpenAI({ input: 'hi', ...(c.client ?? { stream: true }) }, NOW);
    t.request(TARGET, MODEL);
    expectGolden(c, streamed(t.stream('public-model'), c.upstream));
  });

  it('ends a cut stream with response.failed and an error event the SDK raises', () => {
    const t = responsesFromOpenAI({ stream: true, input: 'hi' }, NOW);
    t.request(TARGET, MODEL);
    const tr = t.stream('m');
    const events = clientEvents(tr.event({ event: undefined, data: '{"id":"chatcmpl-x","choices":[{"index":0,"delta":{"content":"Hi"}}]}' }) + tr.error('cut'));
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.failed',
      'error',
    ]);
    expect(events.at(-2)?.data).toMatchObject({
      type: 'response.failed',
      sequence_number: 5,
      response: { id: 'resp_x', status: 'failed', error: { code: 'server_error', message: 'cut' } },
    });
    expect(events.at(-1)?.data).toEqual({
      type: 'error',
      sequence_number: 6,
      code: 'upstream_stream_error',
      message: 'cut',
      param: null,
      error: { message: 'cut', type: 'api_error', param: null, code: 'upstream_stream_error' },
    });
    expect(clientEvents(tr.error('drained', 'shutting_down')).at(-1)?.data).toMatchObject({ code: 'shutting_down' });
  });
});

describe('stateless (a gateway without stored responses): what no upstream gets', () => {
  it.each([
    ['previous_response_id', { previous_response_id: 'resp_1', input: 'hi' }],
    ['conversation', { conversation: 'conv_1', input: 'hi' }],
    ['background', { background: true, input: 'hi' }],
    [
      'input[1]',
      {
        input: [
          { role: 'user', content: 'hi' },
          { type: 'item_reference', id: 'msg_1' },
        ],
      },
    ],
  ])('refuses %s with a 400 naming it', (param, body) => {
    const got = refusal(() => refuseStateful(body, false));
    expect(got.status).toBe(400);
    expect(got.code).toBe('unsupported_content');
    expect(got.message.startsWith(`${param}: `)).toBe(true);
  });

  it('accepts a stateless call (store false, background false, no previous response)', () => {
    expect(() => refuseStateful({ input: 'hi', store: false, background: false, previous_response_id: null }, false)).not.toThrow();
  });

  it('with stored responses, refuses only conversation and background', () => {
    expect(() => refuseStateful({ previous_response_id: 'resp_1', input: [{ type: 'item_reference', id: 'msg_1' }] }, true)).not.toThrow();
    expect(refusal(() => refuseStateful({ conversation: 'conv_1', input: 'hi' }, true)).code).toBe('unsupported_content');
    expect(refusal(() => refuseStateful({ background: true, input: 'hi' }, true)).code).toBe('unsupported_content');
  });
});
