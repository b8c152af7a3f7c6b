// The state store: keys, limits, money. Two implementations pass one suite: memory (standalone) and Redis.
import type { CompiledAccount, KeyRecord, Snapshot } from '../contract/snapshot.ts';
import type { UsageEvent } from '../usage/event.ts';

export type RefusalCode = 'key_revoked' | 'rate_limited' | 'budget_exceeded' | 'insufficient_balance';

export interface AdmitRequest {
  eventId: string;
  key: KeyRecord;
  account: CompiledAccount;
  /** Tokens reserved against TPM: estimated input plus the output cap. */
  tokens: number;
  /** Worst-case cost reserved against the monthly budget and the balance. */
  holdNano: number;
  now: number;
}

export interface Hold {
  id: string;
  account: string;
  key: string;
  tokens: number;
  holdNano: number;
  /** Calendar month (UTC) the hold counts against, e.g. 2026-11. */
  month: string;
}

export type AdmitDecision =
  | { ok: true; hold: Hold }
  | { ok: false; code: RefusalCode; message: string; retryAfterSec?: number };

export interface Settlement {
  /** Actual cost; may be below the hold (the rest is released). */
  costNano: number;
  tokens: number;
  event: UsageEvent;
}

export interface AccountView {
  balanceNano: number;
  keyMonthSpendNano: number;
  accountMonthSpendNano: number;
}

export interface Store {
  /** Replaces config-derived state: snapshot accounts (trial and credits, each applied once) and key records. */
  applyConfig(snapshot: Snapshot, keys: KeyRecord[]): Promise<void>;
  findKey(hash: string): Promise<KeyRecord | null>;
  admit(req: AdmitRequest): Promise<AdmitDecision>;
  /** Settles a hold with the actual cost and records the usage event (atomically where the store allows). */
  settle(hold: Hold, s: Settlement): Promise<void>;
  /** Records an event for a call that got no hold (refused, or failed before admission). */
  record(event: UsageEvent): Promise<void>;
  view(account: string, keyName: string, now: number): Promise<AccountView>;
  close(): Promise<void>;
}

export function monthOf(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}
