// Redis Stream entry ids ("<ms>-<seq>") and the one rule trimming must obey: remove only what every consumer of
// the group has acknowledged, never an entry still pending or not delivered yet.

export function parseId(id: string): [bigint, bigint] {
  const m = /^(\d+)-(\d+)$/.exec(id);
  if (!m) throw new Error(`not a stream entry id: ${id}`);
  return [BigInt(m[1] as string), BigInt(m[2] as string)];
}

export function compareIds(a: string, b: string): number {
  const [am, as] = parseId(a);
  const [bm, bs] = parseId(b);
  if (am !== bm) return am < bm ? -1 : 1;
  return as === bs ? 0 : as < bs ? -1 : 1;
}

const MAX_SEQ = (1n << 64n) - 1n;

/** The smallest id above `id`. */
export function nextId(id: string): string {
  const [ms, seq] = parseId(id);
  return seq === MAX_SEQ ? `${ms + 1n}-0` : `${ms}-${seq + 1n}`;
}

/** Milliseconds since the epoch at which the entry was added. */
export function idTime(id: string): number {
  return Number(parseId(id)[0]);
}

export interface GroupPosition {
  /** The group's last-delivered-id: every entry up to it was handed to some consumer. */
  lastDelivered: string;
  /** The smallest id still pending (delivered, not acknowledged), read after lastDelivered; null if none. */
  oldestPending: string | null;
}

/**
 * The MINID to trim to: entries below it were all delivered (at or below lastDelivered) and none is pending, so
 * all were acknowledged, i.e. committed to Postgres. Read lastDelivered first and the pending list second: an
 * entry delivered in between is above the old lastDelivered, so the answer stays safe.
 */
export function safeTrimId(p: GroupPosition): string {
  const afterDelivered = nextId(p.lastDelivered);
  if (p.oldestPending === null) return afterDelivered;
  return compareIds(p.oldestPending, afterDelivered) < 0 ? p.oldestPending : afterDelivered;
}
