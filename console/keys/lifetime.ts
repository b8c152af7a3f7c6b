// A console key's life (README: Keys, expiry and rotation): the expiry a rotation's successor gets, when a rotated key
// stops (its grace period or its own expiry: the earlier wins), and the highlights of the key list. Pure.
import { EXPIRING_SOON_MS, ROTATE_AFTER_MS, type KeyPolicy } from '../../gateway/contract/key-expiry.ts';

const DAY_MS = 86_400_000;

/**
 * The successor's expiry: as long a life as the old key had (expiry less creation), else the account's
 * maxKeyAgeDays when it requires one; never longer than maxKeyAgeDays. Null: it does not expire.
 */
export function successorExpiry(old: { expiresAt: number | null; createdAt: number | null }, policy: KeyPolicy | null, now: number): number | null {
  const max = policy?.maxKeyAgeDays === undefined ? null : policy.maxKeyAgeDays * DAY_MS;
  let life = old.expiresAt !== null && old.createdAt !== null && old.expiresAt > old.createdAt ? old.expiresAt - old.createdAt : null;
  if (life === null && (policy?.requireExpiry || max !== null)) life = max ?? 90 * DAY_MS;
  if (life === null) return null;
  return Math.floor((now + (max === null ? life : Math.min(life, max))) / 1000) * 1000;
}

/** When a rotated key stops: at the end of the grace period, or at its own expiry if that comes first. */
export function rotatedKeyStops(now: number, graceMs: number, expiresAt: number | null): number {
  const grace = now + graceMs;
  return expiresAt === null ? grace : Math.min(grace, expiresAt);
}

export type Highlight = { kind: 'expiring'; days: number } | { kind: 'old'; days: number } | null;

/** Why a key in the list asks for attention: it expires within 14 days, or it is older than the 90-day advice. */
export function highlightOf(r: { state: string; expiresAt: number | null; createdAt: string | null }, now: number): Highlight {
  if (r.state !== 'Active') return null;
  if (r.expiresAt !== null && r.expiresAt - now <= EXPIRING_SOON_MS) return { kind: 'expiring', days: Math.max(0, Math.floor((r.expiresAt - now) / DAY_MS)) };
  const created = r.createdAt === null ? NaN : Date.parse(r.createdAt);
  if (!Number.isNaN(created) && now - created > ROTATE_AFTER_MS) return { kind: 'old', days: Math.floor((now - created) / DAY_MS) };
  return null;
}

/** A key's age as the list shows it: "3 days", "5 hours", "just now". */
export function ageOf(createdAt: string | null, now: number): string {
  const created = createdAt === null ? NaN : Date.parse(createdAt);
  if (Number.isNaN(created)) return '—';
  const ms = Math.max(0, now - created);
  if (ms >= DAY_MS) return plural(Math.floor(ms / DAY_MS), 'day');
  if (ms >= 3_600_000) return plural(Math.floor(ms / 3_600_000), 'hour');
  return ms >= 60_000 ? plural(Math.floor(ms / 60_000), 'minute') : 'just now';
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}
