// The requests of a Message Batch: what is refused (each naming the request) and what each request holds.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/catalog.ts';
import { MAX_MESSAGE_REQUESTS, messageLines, readMessageRequests } from './message-requests.ts';

const params = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'm',
  max_tokens: 16,
  messages: [{ role: 'user', content: 'hi' }],
  ...over,
});

describe('readMessageRequests', () => {
  it.each([
    ['no body', null, 'requests'],
    ['no requests', {}, 'requests'],
    ['an empty list', { requests: [] }, 'requests'],
    ['too many', { requests: Array.from({ length: MAX_MESSAGE_REQUESTS + 1 }, () => 0) }, `at most ${MAX_MESSAGE_REQUESTS}`],
    ['not an object', { requests: ['x'] }, 'requests.0: each request'],
    ['a bad custom_id', { requests: [{ custom_id: 'a b', params: params() }] }, 'requests.0: custom_id'],
    ['a long custom_id', { requests: [{ custom_id: 'x'.repeat(65), params: params() }] }, 'requests.0: custom_id'],
    ['no params', { requests: [{ custom_id: 'a' }] }, 'requests.0: params must be'],
    ['no max_tokens', { requests: [{ custom_id: 'a', params: params({ max_tokens: undefined }) }] }, 'requests.0: params.max_tokens'],
    ['a stream', { requests: [{ custom_id: 'a', params: params({ stream: true }) }] }, 'requests.0: params.stream'],
    [
      'a duplicate id',
      {
        requests: [
          { custom_id: 'a', params: params() },
          { custom_id: 'a', params: params() },
        ],
      },
      'requests.1: custom_id "a" is used',
    ],
    [
      'two models',
      {
        requests: [
          { custom_id: 'a', params: params() },
          { custom_id: 'b', params: params({ model: 'n' }) },
        ],
      },
      'requests.1: every request',
    ],
  ])('refuses %s with a 400 naming it', (_name, body, says) => {
    let err: unknown;
    try {
      readMessageRequests(body);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
    expect((err as GatewayError).message).toContain(says);
  });

  it("reads each request's demand: its params' bytes and max_tokens", () => {
    const p = params();
    const r = readMessageRequests({ requests: [{ custom_id: 'a-1_B', params: p }] });
    expect(r.model).toBe('m');
    expect(r.requests[0]?.demand).toEqual({ inputBytes: Buffer.byteLength(JSON.stringify(p)), extraInputTokens: 0, maxTokens: 16, choices: 1 });
  });

  it('keeps the requests as batch input lines, params untouched', () => {
    const p = params({ temperature: 0.5 });
    const text = messageLines(readMessageRequests({ requests: [{ custom_id: 'a', params: p }] }).requests);
    expect(text).toBe(`${JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/messages', body: p })}\n`);
  });
});
