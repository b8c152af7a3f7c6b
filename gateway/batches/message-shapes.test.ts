// Each line's result type and shape in a Message Batch's results, and the batch object as it runs and once ended.
import { describe, expect, it } from 'vitest';
import { messageBatchObject, messageResults, resultTypeOf } from './message-shapes.ts';
import type { Charged } from './settle.ts';
import type { BatchRecord, LineResult } from './types.ts';

const line = (over: Partial<LineResult>): LineResult => ({ customId: 'a', status: 200, body: {}, inputTokens: 0, outputTokens: 0, ...over });

describe('resultTypeOf', () => {
  it.each([
    ['an answer', line({ status: 200 }), 'succeeded'],
    ['an upstream error answer', line({ status: 400 }), 'errored'],
    ['a cancelled line', line({ status: 0, error: { code: 'batch_cancelled', message: '' } }), 'canceled'],
    ["Anthropic's canceled", line({ status: 0, error: { code: 'canceled', message: '' } }), 'canceled'],
    ['an expired line', line({ status: 0, error: { code: 'batch_expired', message: '' } }), 'expired'],
    ['no result', line({ status: 0, error: { code: 'missing_result', message: 'none' } }), 'errored'],
  ])('%s is %s', (_n, r, type) => expect(resultTypeOf(r)).toBe(type));
});

describe('messageResults', () => {
  it("writes Anthropic's result lines, the client's model named, errors as ErrorResponse", () => {
    const outcome = { status: 200, errorCode: null, inputTokens: 0, outputTokens: 0, costNano: 0 };
    const charged: Charged = {
      costNano: 0,
      outcomes: [
        { outcome: { ...outcome, customId: 'ok' }, result: line({ customId: 'ok', body: { type: 'message', model: 'up-model' } }) },
        {
          outcome: { ...outcome, customId: 'bad' },
          result: line({ customId: 'bad', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'no' } } }),
        },
        {
          outcome: { ...outcome, customId: 'gone' },
          result: line({ customId: 'gone', status: 0, body: null, error: { code: 'batch_expired', message: 'x' } }),
        },
        {
          outcome: { ...outcome, customId: 'lost' },
          result: line({ customId: 'lost', status: 0, body: null, error: { code: 'missing_result', message: 'none' } }),
        },
      ],
    };
    const r = messageResults('client-model', charged);
    expect(r.counts).toEqual({ succeeded: 1, errored: 2, canceled: 0, expired: 1 });
    expect(
      r.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([
      { custom_id: 'ok', result: { type: 'succeeded', message: { type: 'message', model: 'client-model' } } },
      { custom_id: 'bad', result: { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'no' }, request_id: null } } },
      { custom_id: 'gone', result: { type: 'expired' } },
      { custom_id: 'lost', result: { type: 'errored', error: { type: 'error', error: { type: 'api_error', message: 'none' }, request_id: null } } },
    ]);
  });
});

describe('messageBatchObject', () => {
  const b = {
    id: 'msgbatch_x',
    status: 'in_progress',
    settled: false,
    lines: [{}, {}],
    createdAt: Date.UTC(2026, 0, 1),
    expiresAt: Date.UTC(2026, 0, 2),
    endedAt: null,
    cancellingAt: null,
  } as unknown as BatchRecord;

  it('running: every request processing, no results_url', () => {
    expect(messageBatchObject(b, 'u')).toEqual({
      id: 'msgbatch_x',
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: 2, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: null,
      created_at: '2026-01-01T00:00:00.000Z',
      expires_at: '2026-01-02T00:00:00.000Z',
      archived_at: null,
      cancel_initiated_at: null,
      results_url: null,
    });
  });

  it('cancelling, then ended with its counts and results_url', () => {
    expect(messageBatchObject({ ...b, status: 'cancelling', cancellingAt: b.createdAt }, 'u')).toMatchObject({
      processing_status: 'canceling',
      cancel_initiated_at: '2026-01-01T00:00:00.000Z',
    });
    const ended = { ...b, settled: true, endedAt: b.createdAt, resultCounts: { succeeded: 1, errored: 0, canceled: 1, expired: 0 } };
    expect(messageBatchObject(ended, 'u')).toMatchObject({
      processing_status: 'ended',
      request_counts: { processing: 0, succeeded: 1, errored: 0, canceled: 1, expired: 0 },
      ended_at: '2026-01-01T00:00:00.000Z',
      results_url: 'u',
    });
  });
});
