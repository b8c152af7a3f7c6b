// The state store: keys, limits, money. Two implementations pass one suite: memory (standalone) and Redis.
import type { CompiledAccount, KeyRecord, Snapshot } from '../contract/snapshot.ts';
import type { UsageEvent } from '../usage/event.ts';
import type { CacheStore } from './response-cache.ts';
import type { McpSessionStore } from './mcp-sessions.ts';

export type RefusalCode = 'key_revoked' | 'key_expired' | 'rate_limited' | 'request_too_large_for_limit' | 'budget_exceeded' | 'insufficient_balance';

export interface AdmitRequest {
  eventId: string;
  key: KeyRecord;
  account: CompiledAccount;
  /** Tokens reserved against TPM: estimated input plus the output cap. */
  tokens: number;
  /** Worst-case cost reserved against the monthly budget and the balance. */
  holdNano: number;
  now: number;
  /** How long the hold lasts unsettled (a batch's: its completion window and more); default the store's hold TTL. */
  holdTtlMs?: number;
}

export interface Hold {
  id: string;
  account: string;
  key: string;
  tokens: number;
  holdNano: number;
  /** Calendar month (UTC) the hold counts against, e.g. 2026-11. */
  month: string;
  /** The in-memory store's place of the call in its key's window (other stores leave it out). */
  slot?: number;
  /** The admission lease the call was admitted from (gateway/state/leases.ts); absent: an ordinary hold. */
  lease?: string;
}

export type AdmitDecision = { ok: true; hold: Hold } | { ok: false; code: RefusalCode; message: string; retryAfterSec?: number };

export interface Settlement {
  /** Actual cost; may be below the hold (the rest is released). */
  costNano: number;
  tokens: number;
  event: UsageEvent;
  /** The call was refused after admission before any upstream saw it: its RPM and TPM slot are given back. */
  freeSlot?: boolean;
}

/** One line of a batch charged against the batch's hold (gateway/batches/): the line's share of the hold given up. */
export interface LineSettlement {
  /** Unique per line (the line's usage event id): a line charged once, whatever retries or restarts. */
  lineId: string;
  /** The line's own worst case, taken off what the batch still holds (never below 0). */
  lineHoldNano: number;
  costNano: number;
  event: UsageEvent;
}

/** A hold settled in parts (a batch): each line charged on its own, then what is left released. */
export interface PartSettle {
  settleLine(hold: Hold, s: LineSettlement): Promise<void>;
  /** Releases what is left of a hold, charging nothing (a batch whose every line is charged). */
  release(hold: Hold, now: number): Promise<void>;
}

/** Largest amount (nano-USD) or token count a store takes: exact in a double, in Lua and in Redis' 64-bit integers. */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

/** Refuses an amount that is not a non-negative safe integer (a store must never be asked to write one). */
export function checkAmount(name: string, n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be an integer from 0 to ${MAX_AMOUNT}, got ${n}`);
  return n;
}

export interface AccountView {
  balanceNano: number;
  keyMonthSpendNano: number;
  accountMonthSpendNano: number;
  /** The key's response cache hits this month and what they saved (nano-USD); absent: the store keeps none. */
  keyMonthCacheHits?: number;
  keyMonthCacheSavedNano?: number;
}

/** Money and hold totals of one account, as the ledger keeps them (tests check ledger == sum of usage events). */
export interface Ledger {
  creditedNano: number;
  /** Settled cost of every call, all months. */
  spentNano: number;
  /** The platform fee share of spentNano. */
  feeNano: number;
  heldNano: number;
  openHolds: number;
}

/** One account's money as status shows it: the ledger's credited and spent, and this month's spend (nano-USD). */
export interface MonthSpend {
  creditedNano: number;
  spentNano: number;
  accountMonthNano: number;
  /** This month's spend of each key asked for (0 when it has none). */
  keyMonthNano: Record<string, number>;
}

/** Writes and reads beside the request path: revocation (standalone publish, operator) and the ledger. */
export interface StoreAdmin {
  /** Revokes a key by its HMAC hash, for good: no later write makes it active again. */
  revoke(hash: string): Promise<void>;
  ledger(account: string): Promise<Ledger>;
}

export interface StoreTiming {
  /** A hold not settled within this time is released (its replica crashed); default 15 minutes. */
  holdTtlMs?: number;
  /** The memory store's clock for key expiry in findKey (admit uses the request's `now`); default Date.now. */
  now?: () => number;
}

/**
 * A key record as a lookup found it: `expired` decided by the store's one clock (Redis: the server's TIME), and that
 * clock's lead over this process's Date.now at the lookup, so time left is told by the store's clock too.
 */
export type FoundKey = KeyRecord & { expired: boolean; clockOffsetMs: number };

export const DEFAULT_HOLD_TTL_MS = 15 * 60_000;
/** Settled hold ids are remembered this long beyond the hold TTL, so a retried settle never charges twice. */
export const SETTLED_MEMORY_MS = 10 * 60_000;

export interface Store {
  /** Replaces config-derived state: snapshot accounts (trial and credits, each applied once) and key records. */
  applyConfig(snapshot: Snapshot, keys: KeyRecord[]): Promise<void>;
  findKey(hash: string): Promise<FoundKey | null>;
  admit(req: AdmitRequest): Promise<AdmitDecision>;
  /** Settles a hold with the actual cost and records the usage event (atomically where the store allows). */
  settle(hold: Hold, s: Settlement): Promise<void>;
  /** Records an event for a call that got no hold (refused, or failed before admission). */
  record(event: UsageEvent): Promise<void>;
  view(account: string, keyName: string, now: number): Promise<AccountView>;
  close(): Promise<void>;
  /** Where the response cache keeps its entries, beside the account's money (state/response-cache.ts). */
  readonly responseCache?: CacheStore;
  /** MCP sessions' last use, for their idle TTL (state/mcp-sessions.ts). */
  readonly mcpSessions?: McpSessionStore;
  /** Batches' holds, settled line by line (gateway/batches/settle.ts). */
  readonly parts?: PartSettle;
}

export function monthOf(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}

/** When a settlement happened, on the caller's clock: the call's start plus its latency. */
export function settledAt(s: Settlement): number {
  return Date.parse(s.event.createdAt) + s.event.latencyMs;
}
