// Self-service keys: who may act on which key. `manage-keys` on an account: every key of it. `create-own-keys`: only
// the keys the person made (a key records its creator's user name), at most `max` unrevoked ones per account, and
// the others' keys are not even listed. The person's own keys come first in the list either way.
import type { KeyRow } from './backend.ts';

export interface KeyRights {
  /** manage-keys: every key. */
  manage: boolean;
  /** create-own-keys: one's own keys. */
  own: boolean;
}

export const OWN_KEYS_MAX = 5;

export function mayCreate(r: KeyRights): boolean {
  return r.manage || r.own;
}

export function mayActOn(r: KeyRights, me: string, key: Pick<KeyRow, 'createdBy'>): boolean {
  return r.manage || (r.own && key.createdBy === me);
}

/** The rows a person sees, theirs first (each part in the backend's order). */
export function visibleRows(r: KeyRights, me: string, rows: KeyRow[]): KeyRow[] {
  const mine = rows.filter((k) => k.createdBy === me);
  if (!r.manage) return mine;
  return [...mine, ...rows.filter((k) => k.createdBy !== me)];
}

export function ownedUnrevoked(me: string, rows: KeyRow[]): number {
  return rows.filter((k) => k.createdBy === me && k.state !== 'Revoked').length;
}
