// Shapes of the Redis Stream replies the exporter reads (ioredis types most of them as unknown), checked here.

export interface Entry {
  stream: string;
  id: string;
  /** Flat field list [k1, v1, k2, v2, ...]. */
  fields: string[];
}

function isStringArray(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((s) => typeof s === 'string');
}

/** One stream's entries: [[id, [k, v, ...]], ...]; an entry deleted meanwhile comes as [id, null] and is skipped. */
export function entriesOf(stream: string, raw: unknown): Entry[] {
  if (!Array.isArray(raw)) return [];
  const out: Entry[] = [];
  for (const e of raw) {
    if (!Array.isArray(e) || typeof e[0] !== 'string') continue;
    out.push({ stream, id: e[0], fields: isStringArray(e[1]) ? e[1] : [] });
  }
  return out;
}

/** XREADGROUP: [[stream, entries], ...] or null. */
export function readReply(raw: unknown): Entry[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((s: unknown) => (Array.isArray(s) && typeof s[0] === 'string' ? entriesOf(s[0], s[1]) : []));
}

/** XAUTOCLAIM: [next cursor, entries, ids deleted from the stream while pending (Redis 7)]. */
export function autoclaimReply(stream: string, raw: unknown): { next: string; entries: Entry[]; deleted: string[] } {
  if (!Array.isArray(raw) || typeof raw[0] !== 'string') return { next: '0-0', entries: [], deleted: [] };
  return { next: raw[0], entries: entriesOf(stream, raw[1]), deleted: isStringArray(raw[2]) ? raw[2] : [] };
}

/** A flat [k1, v1, ...] reply as a record. */
export function flatRecord(raw: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!Array.isArray(raw)) return out;
  for (let i = 0; i + 1 < raw.length; i += 2) if (typeof raw[i] === 'string') out[raw[i] as string] = raw[i + 1];
  return out;
}

export interface GroupInfo {
  name: string;
  lastDelivered: string;
  pending: number;
  /** Entries not yet delivered to the group; null when Redis cannot tell (after some deletions). */
  lag: number | null;
}

/** XINFO GROUPS: one flat record per group. */
export function groupsReply(raw: unknown): GroupInfo[] {
  if (!Array.isArray(raw)) return [];
  return raw.map(flatRecord).map((r) => ({
    name: String(r.name ?? ''),
    lastDelivered: String(r['last-delivered-id'] ?? '0-0'),
    pending: Number(r.pending ?? 0),
    lag: r.lag === null || r.lag === undefined ? null : Number(r.lag),
  }));
}

/** XPENDING summary: [count, smallest id, greatest id, consumers]; the smallest id, or null when none. */
export function oldestPendingReply(raw: unknown): string | null {
  return Array.isArray(raw) && Number(raw[0]) > 0 && typeof raw[1] === 'string' ? raw[1] : null;
}

/** XPENDING extended: [[id, consumer, idle ms, deliveries], ...] as id -> deliveries. */
export function deliveriesReply(raw: unknown): Map<string, number> {
  const out = new Map<string, number>();
  if (!Array.isArray(raw)) return out;
  for (const p of raw) if (Array.isArray(p) && typeof p[0] === 'string') out.set(p[0], Number(p[3]));
  return out;
}

export interface ConsumerInfo {
  name: string;
  pending: number;
  idleMs: number;
}

/** XINFO CONSUMERS: one flat record per consumer. */
export function consumersReply(raw: unknown): ConsumerInfo[] {
  if (!Array.isArray(raw)) return [];
  return raw.map(flatRecord).map((r) => ({ name: String(r.name ?? ''), pending: Number(r.pending ?? 0), idleMs: Number(r.idle ?? 0) }));
}
