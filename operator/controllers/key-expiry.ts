// What the operator says about key expiry (README: Keys, expiry and rotation), as pure functions of the compiled key
// records and a time: the ApiKey status, when to look again, and svc_gateway_keys_expiring by account.
import { EXPIRING_SOON_MS, isExpired, rfc3339 } from '../../gateway/contract/key-expiry.ts';
import type { KeyRecord } from '../../gateway/contract/snapshot.ts';

/** Longest wait before a key's next expiry step is looked at again (the periodic resync comes too). */
const MAX_WAIT_MS = 3_600_000;

export interface ExpiryView {
  expiresAt: string | null;
  expired: boolean;
  /** Within EXPIRING_SOON_MS of the expiry, not expired yet. */
  soon: boolean;
  /** When the next step (soon, expired) is due, from now; null when none is ahead. */
  recheckMs: number | null;
}

export function expiryView(expiresAt: number | null | undefined, now: number): ExpiryView {
  if (expiresAt === null || expiresAt === undefined) return { expiresAt: null, expired: false, soon: false, recheckMs: null };
  const expired = isExpired(expiresAt, now);
  const soon = !expired && expiresAt - now <= EXPIRING_SOON_MS;
  const next = expired ? null : soon ? expiresAt : expiresAt - EXPIRING_SOON_MS;
  return { expiresAt: rfc3339(expiresAt), expired, soon, recheckMs: next === null ? null : Math.min(MAX_WAIT_MS, Math.max(0, next - now)) };
}

/** Keys expiring within 14 days (not expired, not revoked), by account; every account listed, 0 included. */
export function expiringByAccount(keys: readonly KeyRecord[], accounts: readonly string[], now: number): Array<{ account: string; keys: number }> {
  const counts = new Map(accounts.map((a) => [a, 0]));
  for (const k of keys) {
    if (!k.revoked && expiryView(k.expiresAt, now).soon) counts.set(k.account, (counts.get(k.account) ?? 0) + 1);
  }
  return [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([account, n]) => ({ account, keys: n }));
}

/** How many whole days are left, as the Event says it ("in 13 days"; "today" within the last day). */
export function daysLeft(expiresAt: number, now: number): string {
  const d = Math.floor((expiresAt - now) / 86_400_000);
  return d <= 0 ? 'today' : d === 1 ? 'in 1 day' : `in ${d} days`;
}
