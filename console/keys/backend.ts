// What the keys page needs from wherever keys live: standalone (manifests + store) or a cluster (ApiKey objects).
import type { KeySpec, PlanLimits } from './key-spec.ts';

export type KeyState = 'Active' | 'Expired' | 'Revoked';

export interface KeyRow {
  name: string;
  account: string;
  /** sk-svc-… + last 4 characters; the full key is never kept. */
  display: string;
  state: KeyState;
  /** ISO time, or null when unknown (keys from manifests). */
  createdAt: string | null;
  lastUsedAt: number | null;
  monthSpendNano: number;
  monthlyBudgetNano: number | null;
  rpm: number | null;
  tpm: number | null;
  models: string[] | null;
  /** When a rotation's grace period ends (or the key's own expiry, if earlier) and the key is revoked. */
  revokeAt: number | null;
  /** When the key expires (ms); null: never. */
  expiresAt: number | null;
  createdBy: string | null;
}

export interface KeyPage {
  rows: KeyRow[];
  total: number;
}

export interface CreatedKey {
  /** The full key: shown once in the dialog, then gone. */
  key: string;
  row: KeyRow;
  /** After a rotation: when the old key stops (grace period end, or its own expiry if earlier). */
  previousStopsAt?: number;
}

/**
 * Why an action on a key was refused, which is also the answer's status: a name that is no key name (400), no such key
 * in the account (404), the Kubernetes API refusing the console (403), a state that forbids it or a concurrent change
 * (409), a form the API server refused (422).
 */
export type KeyRefusal = 'bad-name' | 'not-found' | 'forbidden' | 'conflict' | 'invalid';

/** A refusal to show the user next to the form or on the action's page (not a crash). */
export class KeyActionError extends Error {
  readonly field: keyof KeySpec | null;
  readonly refusal: KeyRefusal;
  constructor(message: string, field: keyof KeySpec | null = null, refusal: KeyRefusal = 'invalid') {
    super(message);
    this.field = field;
    this.refusal = refusal;
  }
}

export function refusalStatus(r: KeyRefusal): 400 | 403 | 404 | 409 | 422 {
  switch (r) {
    case 'bad-name':
      return 400;
    case 'forbidden':
      return 403;
    case 'not-found':
      return 404;
    case 'conflict':
      return 409;
    case 'invalid':
      return 422;
    default: {
      const never: never = r;
      return never;
    }
  }
}

/**
 * Who makes a key: a user name, or a signed-in person with the groups their sign-in gave (cluster keys record them
 * for the operator's offboarding check).
 */
export type KeyActor = string | { name: string; groups: readonly string[] };

export function actorName(a: KeyActor): string {
  return typeof a === 'string' ? a : a.name;
}

export interface KeyBackend {
  /** Every account (the caller filters by permission). */
  accounts(): Promise<string[]>;
  planLimits(account: string): Promise<PlanLimits>;
  list(account: string, offset: number, limit: number, now: number): Promise<KeyPage>;
  create(account: string, spec: KeySpec, actor: KeyActor, now: number): Promise<CreatedKey>;
  /** Refuses (KeyActionError, 'not-found') when the account has no key of that name: an action's page is never shown for one. */
  expectKey(account: string, name: string): Promise<void>;
  revoke(account: string, name: string, actor: string, now: number): Promise<void>;
  /** A new key with the same settings; the old one is revoked now (graceMs 0) or once the grace period ends. */
  rotate(account: string, name: string, graceMs: number, actor: KeyActor, now: number): Promise<CreatedKey>;
}

export const GRACE_PERIODS: ReadonlyArray<{ value: string; label: string; ms: number }> = [
  { value: 'now', label: 'Now', ms: 0 },
  { value: '1h', label: '1 hour', ms: 3600_000 },
  { value: '24h', label: '24 hours', ms: 24 * 3600_000 },
  { value: '7d', label: '7 days', ms: 7 * 24 * 3600_000 },
];
