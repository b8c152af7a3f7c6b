// The File and Batch objects as OpenAI's API writes them (openai/openai-openapi OpenAIFile, Batch): a field the
// gateway has no value for is left out, as the description marks it optional and not nullable.
import type { BatchRecord, FileRecord } from './types.ts';

const sec = (ms: number | null): number | undefined => (ms === null ? undefined : Math.floor(ms / 1000));

export function fileObject(f: FileRecord): Record<string, unknown> {
  return {
    id: f.id,
    object: 'file',
    bytes: f.bytes,
    created_at: f.createdAt,
    expires_at: f.expiresAt,
    filename: f.filename,
    purpose: f.purpose,
    status: 'processed',
  };
}

export function batchObject(b: BatchRecord): Record<string, unknown> {
  const ended = sec(b.endedAt);
  const o: Record<string, unknown> = {
    id: b.id,
    object: 'batch',
    endpoint: b.endpoint,
    model: b.model,
    errors:
      b.errors.length > 0
        ? { object: 'list', data: b.errors.map((e) => ({ code: e.code, message: e.message, ...(e.line ? { line: e.line } : {}) })) }
        : undefined,
    input_file_id: b.inputFileId ?? '',
    completion_window: b.completionWindow,
    status: b.status,
    output_file_id: b.outputFileId ?? undefined,
    error_file_id: b.errorFileId ?? undefined,
    created_at: Math.floor(b.createdAt / 1000),
    in_progress_at: sec(b.inProgressAt),
    expires_at: Math.floor(b.expiresAt / 1000),
    finalizing_at: b.status === 'completed' ? ended : undefined,
    completed_at: b.status === 'completed' ? ended : undefined,
    failed_at: b.status === 'failed' ? ended : undefined,
    expired_at: b.status === 'expired' ? ended : undefined,
    cancelling_at: sec(b.cancellingAt),
    cancelled_at: b.status === 'cancelled' ? ended : undefined,
    request_counts: b.counts,
    metadata: b.metadata,
  };
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

/** OpenAI's list page: `has_more` when a further item exists (the caller asked for one more than `limit`). */
export function listObject<T extends { id: string }>(items: T[], limit: number, render: (x: T) => Record<string, unknown>): Record<string, unknown> {
  const page = items.slice(0, limit);
  return {
    object: 'list',
    data: page.map(render),
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
    has_more: items.length > limit,
  };
}
