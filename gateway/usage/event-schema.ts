// Reads a usage event back from its wire form (a Redis Stream entry's `event` field, JSON): validated, so a bad
// entry is recognised as poison and parked instead of failing every batch it lands in.
import { z } from 'zod';
import type { UsageEvent } from './event.ts';

/** Postgres text cannot hold NUL; a client may still send one (in metadata.task_type), so it is dropped here. */
const text = z
  .string()
  .max(1000)
  .transform((s) => s.replaceAll('\u0000', ''));
const count = z.number().int().min(0).max(2_147_483_647);
const nano = z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

export const usageEventSchema = z.object({
  eventId: z.uuid(),
  createdAt: z.iso.datetime({ offset: true }),
  account: text,
  apiKey: text,
  taskType: text.nullable(),
  endpoint: z.enum([
    'chat.completions',
    'embeddings',
    'messages',
    'count_tokens',
    'responses',
    'mcp',
    'completions',
    'rerank',
    'moderations',
    'images.generations',
    'images.edits',
    'audio.transcriptions',
    'audio.translations',
    'audio.speech',
  ]),
  requestedModel: text,
  servedModel: text.nullable(),
  upstream: text.nullable(),
  fallback: z.boolean(),
  fallbackReason: z.enum(['timeout', 'connect_error', 'credential_error', 'upstream_5xx', 'upstream_429', 'unavailable']).nullable(),
  status: z.number().int().min(0).max(999),
  errorCode: text.nullable(),
  stream: z.boolean(),
  inputTokens: count,
  outputTokens: count,
  cacheReadTokens: count.default(0),
  cacheWriteTokens: count.default(0),
  costNano: nano,
  feeNano: nano,
  latencyMs: count,
  ttftMs: count.nullable().default(null),
  droppedTools: z.array(z.string().max(64)).max(64).optional(),
  usageEstimated: z.boolean().default(false),
  usageClamped: z.boolean().default(false),
  unit: z.enum(['seconds', 'characters', 'images']).optional(),
  units: count.optional(),
  batch: z.boolean().optional(),
  cache: z.enum(['hit', 'miss', 'bypass']).optional(),
  cacheSavedNano: nano.min(0).optional(),
  guardrailCostNano: nano.min(0).optional(),
  guardrails: z
    .array(
      z.object({
        guardrail: z.string().max(253),
        check: z.string().max(63),
        action: z.enum(['block', 'mask', 'log']),
        stage: z.enum(['request', 'response']),
        kind: z.string().max(128),
        count: count,
      }),
    )
    .max(1000)
    .optional(),
});

export type PoisonReason = 'bad_format' | 'invalid_json' | 'invalid_event' | 'rejected_by_postgres' | 'too_many_deliveries';
export const POISON_REASONS: readonly PoisonReason[] = ['bad_format', 'invalid_json', 'invalid_event', 'rejected_by_postgres', 'too_many_deliveries'];

export type Decoded = { ok: true; event: UsageEvent } | { ok: false; reason: PoisonReason; detail: string };

/** Parses one event's JSON; never throws. */
export function decodeEvent(json: string): Decoded {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    return { ok: false, reason: 'invalid_json', detail: err instanceof Error ? err.message : String(err) };
  }
  return validated(raw);
}

function validated(raw: unknown): Decoded {
  const r = usageEventSchema.safeParse(raw);
  if (!r.success) return { ok: false, reason: 'invalid_event', detail: z.prettifyError(r.error).slice(0, 2000) };
  return { ok: true, event: r.data };
}

/**
 * A stream entry's flat field list ([k1, v1, k2, v2, ...]) as one event: format version 1 carries it under `event`.
 * An entry of format 2 (several events) is not one event: decodeEntry reads both.
 */
export function decodeFields(fields: readonly string[]): Decoded {
  const map = fieldMap(fields);
  const v = map.get('v');
  const json = map.get('event');
  if (v !== '1' || json === undefined)
    return { ok: false, reason: 'bad_format', detail: `unknown entry format (v=${v ?? 'missing'}, event ${json === undefined ? 'missing' : 'present'})` };
  return decodeEvent(json);
}

/**
 * Every event of a stream entry, in order: format 1 carries one under `event`; format 2 (a lease's flush, written
 * by lease.lua) carries several under `events`, a JSON array. An unreadable array is one poison result.
 */
export function decodeEntry(fields: readonly string[]): Decoded[] {
  const map = fieldMap(fields);
  if (map.get('v') !== '2') return [decodeFields(fields)];
  const json = map.get('events');
  if (json === undefined) return [{ ok: false, reason: 'bad_format', detail: 'unknown entry format (v=2, events missing)' }];
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    return [{ ok: false, reason: 'invalid_json', detail: err instanceof Error ? err.message : String(err) }];
  }
  if (!Array.isArray(raw) || raw.length === 0) return [{ ok: false, reason: 'bad_format', detail: 'unknown entry format (v=2, events not a list)' }];
  return raw.map(validated);
}

function fieldMap(fields: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i] as string, fields[i + 1] as string);
  return map;
}

/** The events of a stream entry (either format) as parsed JSON, unvalidated; [] for an entry that does not read. */
export function entryEvents(fields: readonly string[]): unknown[] {
  const map = fieldMap(fields);
  const v = map.get('v');
  const json = v === '2' ? map.get('events') : map.get('event');
  if (json === undefined) return [];
  try {
    const raw: unknown = JSON.parse(json);
    if (v !== '2') return [raw];
    return Array.isArray(raw) ? raw : [];
  } catch {
    return [];
  }
}
