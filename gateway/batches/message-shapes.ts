// Anthropic's Message Batch objects as its API writes them (and @anthropic-ai/sdk reads them): the batch
// (`type: message_batch`, processing_status, request_counts by result type, RFC 3339 times, results_url once ended),
// the deleted batch, and each line of the results file, `{custom_id, result: {type: succeeded|errored|canceled|expired}}`.
import type { Charged } from './settle.ts';
import type { BatchRecord, LineResult, MessageResultCounts } from './types.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function messageBatchObject(b: BatchRecord, resultsUrl: string): Record<string, unknown> {
  const ended = b.settled;
  const c = b.resultCounts ?? { succeeded: 0, errored: 0, canceled: 0, expired: 0 };
  return {
    id: b.id,
    type: 'message_batch',
    processing_status: ended ? 'ended' : b.status === 'cancelling' ? 'canceling' : 'in_progress',
    request_counts: ended ? { processing: 0, ...c } : { processing: b.lines.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
    ended_at: ended ? iso(b.endedAt) : null,
    created_at: iso(b.createdAt),
    expires_at: iso(b.expiresAt),
    archived_at: null,
    cancel_initiated_at: iso(b.cancellingAt),
    results_url: ended ? resultsUrl : null,
  };
}

export function deletedObject(id: string): Record<string, unknown> {
  return { id, type: 'message_batch_deleted' };
}

type ResultType = keyof MessageResultCounts;

/** What a line came back as, in Anthropic's result types (a line with no answer: cancelled or expired by its code). */
export function resultTypeOf(r: LineResult): ResultType {
  if (r.status >= 200 && r.status < 300) return 'succeeded';
  if (r.status === 0 && r.error && /cancel/i.test(r.error.code)) return 'canceled';
  if (r.status === 0 && r.error && /expire/i.test(r.error.code)) return 'expired';
  return 'errored';
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** An errored line's error as Anthropic's ErrorResponse: the upstream's own when it is one, else made from what is known. */
function errorResponse(r: LineResult): Record<string, unknown> {
  const body = r.body as { type?: unknown; error?: { type?: unknown; message?: unknown } } | null;
  if (body && body.type === 'error' && typeof body.error?.type === 'string' && typeof body.error.message === 'string')
    return { type: 'error', error: { type: body.error.type, message: body.error.message }, request_id: null };
  const message = r.error?.message ?? (typeof body?.error?.message === 'string' ? body.error.message : 'The request failed upstream.');
  return { type: 'error', error: { type: ERROR_TYPES[r.status] ?? 'api_error', message }, request_id: null };
}

export interface MessageResults {
  text: string;
  counts: MessageResultCounts;
}

/** The results file (one JSON line per request, in the batch's order) and its counts by result type. */
export function messageResults(model: string, charged: Charged): MessageResults {
  const counts: MessageResultCounts = { succeeded: 0, errored: 0, canceled: 0, expired: 0 };
  const lines: string[] = [];
  for (const { outcome, result } of charged.outcomes) {
    const type = resultTypeOf(result);
    counts[type] += 1;
    let body: Record<string, unknown> = { type };
    // The answer names the model the client asked for, as every answer of the gateway does.
    if (type === 'succeeded') body = { type, message: { ...(result.body as Record<string, unknown>), model } };
    if (type === 'errored') body = { type, error: errorResponse(result) };
    lines.push(JSON.stringify({ custom_id: outcome.customId, result: body }));
  }
  return { text: lines.length > 0 ? `${lines.join('\n')}\n` : '', counts };
}
