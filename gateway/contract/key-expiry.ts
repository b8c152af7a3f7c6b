// Key expiry (README: Keys, expiry and rotation): when a key stops, and the thresholds the product warns at. Pure;
// which clock decides is the store's business (Redis: the server's TIME inside admit.lua; memory: the process).

const DAY_MS = 86_400_000;

/** A key at or past its expiry answers 401 key_expired: expiresAt is the first instant it no longer works. */
export function isExpired(expiresAt: number | null | undefined, now: number): boolean {
  return expiresAt !== null && expiresAt !== undefined && now >= expiresAt;
}

/** Answers carry x-svc-key-expires-in when the key expires within this time, so CLIs can warn. */
export const EXPIRY_HEADER_WITHIN_MS = 7 * DAY_MS;
/** The operator's Event and svc_gateway_keys_expiring, and the console's highlight: this long before expiry. */
export const EXPIRING_SOON_MS = 14 * DAY_MS;
/** The rotation advice: the console highlights keys older than this. */
export const ROTATE_AFTER_MS = 90 * DAY_MS;

/** Whole seconds left (0 once expired), or null when the key does not expire within EXPIRY_HEADER_WITHIN_MS. */
export function expiresInHeader(expiresAt: number | null | undefined, now: number): string | null {
  if (expiresAt === null || expiresAt === undefined || expiresAt - now > EXPIRY_HEADER_WITHIN_MS) return null;
  return String(Math.max(0, Math.floor((expiresAt - now) / 1000)));
}

export interface KeyPolicy {
  maxKeyAgeDays?: number | undefined;
  requireExpiry: boolean;
}

/**
 * When a key expires: its own expiresAt, or earlier when its account's keyPolicy.maxKeyAgeDays ends its life first
 * (counted from its creation, known in a cluster; keys of manifest files have no creation time).
 */
export function effectiveExpiry(expiresAt: string | undefined, createdAt: number | null, policy: KeyPolicy | undefined): number | null {
  const own = expiresAt === undefined ? null : Date.parse(expiresAt);
  const max = policy?.maxKeyAgeDays !== undefined && createdAt !== null ? createdAt + policy.maxKeyAgeDays * DAY_MS : null;
  if (own === null) return max;
  return max === null ? own : Math.min(own, max);
}

/** Why a key breaks its account's policy (null: it does not): the message names the policy. */
export function policyViolation(account: string, expiresAt: string | undefined, policy: KeyPolicy | undefined): string | null {
  if (policy?.requireExpiry && expiresAt === undefined) {
    return `Account ${account} has keyPolicy.requireExpiry: set spec.expiresAt on this key (RFC 3339${
      policy.maxKeyAgeDays === undefined ? '' : `, at most ${policy.maxKeyAgeDays} days after its creation`
    }); until then no gateway accepts it.`;
  }
  return null;
}

/** RFC 3339 in UTC without milliseconds when they are zero, as Kubernetes writes times. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
}
