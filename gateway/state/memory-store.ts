// In-memory store for one standalone process: the same decisions as the Redis store, exact by construction
// (JavaScript runs one admission at a time). It mirrors redis-store.ts step by step: holds with a deadline,
// reclaimed on the account's next admit or settle; settle idempotent per hold id; revocation for good.
import { MemoryCacheStore, type CacheStore } from './response-cache.ts';
import { MemoryMcpSessions, type McpSessionStore } from './mcp-sessions.ts';
import { isExpired } from '../contract/key-expiry.ts';
import type { KeyRecord, Snapshot } from '../contract/snapshot.ts';
import type { UsageEvent, UsageSink } from '../usage/event.ts';
import { decideAdmission, toDecision, WINDOW_MS, type LimitState } from './admission.ts';
import { WindowLog } from './window-log.ts';
import {
  checkAmount,
  DEFAULT_HOLD_TTL_MS,
  monthOf,
  SETTLED_MEMORY_MS,
  settledAt,
  type AccountView,
  type AdmitDecision,
  type AdmitRequest,
  type FoundKey,
  type Hold,
  type Ledger,
  type LineSettlement,
  type PartSettle,
  type Settlement,
  type Store,
  type StoreAdmin,
  type StoreTiming,
} from './store.ts';

/** Settled hold ids remembered per account at most (see settle). */
const SETTLED_KEEP = 20_000;

interface AccountState {
  creditedNano: number;
  spentNano: number;
  feeNano: number;
  heldNano: number;
  appliedCredits: Set<string>;
  trialGranted: boolean;
  /** Spend by month, and by `<month>|<key>` for each key. */
  monthSpend: Map<string, number>;
  /** Open holds by `<month>|<key>`. */
  monthHeld: Map<string, number>;
  holds: Map<string, { hold: Hold; deadline: number }>;
  /** Settled hold ids (two generations), so a retried settle is a no-op. */
  settled: Set<string>;
  settledBefore: Set<string>;
  /** When the current generation began. */
  settledSince: number;
  /** The lines charged of each batch hold (PartSettle). */
  lines: Map<string, Set<string>>;
}

export class MemoryStore implements Store, StoreAdmin {
  private keys = new Map<string, KeyRecord>();
  private readonly revoked = new Set<string>();
  private readonly accounts = new Map<string, AccountState>();
  private readonly windows = new Map<string, WindowLog>();
  private readonly sink: UsageSink;
  private readonly holdTtlMs: number;
  private readonly now: () => number;
  readonly responseCache: CacheStore = new MemoryCacheStore();
  readonly mcpSessions: McpSessionStore = new MemoryMcpSessions();
  readonly parts: PartSettle = {
    settleLine: (hold, s) => this.settleLine(hold, s),
    release: (hold, now) => this.releaseHold(hold, now),
  };

  constructor(sink: UsageSink, timing: StoreTiming = {}) {
    this.sink = sink;
    this.holdTtlMs = timing.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;
    this.now = timing.now ?? Date.now;
  }

  async applyConfig(snapshot: Snapshot, keys: KeyRecord[]): Promise<void> {
    for (const a of Object.values(snapshot.accounts)) {
      const st = this.account(a.name);
      if (!st.trialGranted) {
        st.trialGranted = true;
        st.creditedNano += a.trialCreditNano;
      }
      for (const c of a.credits) {
        if (st.appliedCredits.has(c.id)) continue;
        st.appliedCredits.add(c.id);
        st.creditedNano += c.amountNano;
      }
    }
    for (const k of keys) if (k.revoked) this.revoked.add(k.hash);
    // Keys missing from the new config go, except revoked ones: they stay, revoked, whatever later config says.
    const next = new Map<string, KeyRecord>();
    for (const [hash, k] of this.keys) if (this.revoked.has(hash)) next.set(hash, { ...k, revoked: true });
    for (const k of keys) next.set(k.hash, { ...k, revoked: this.revoked.has(k.hash) });
    this.keys = next;
  }

  async revoke(hash: string): Promise<void> {
    this.revoked.add(hash);
    const k = this.keys.get(hash);
    if (k) this.keys.set(hash, { ...k, revoked: true });
  }

  async findKey(hash: string): Promise<FoundKey | null> {
    const k = this.keys.get(hash);
    // One clock: the process's (the pipeline's clock is this one too).
    return k ? { ...k, expired: isExpired(k.expiresAt, this.now()), clockOffsetMs: 0 } : null;
  }

  async admit(req: AdmitRequest): Promise<AdmitDecision> {
    checkAmount('tokens', req.tokens);
    checkAmount('holdNano', req.holdNano);
    const acct = this.account(req.account.name);
    this.reclaim(acct, req.now);
    const month = monthOf(req.now);
    const hold: Hold = { id: req.eventId, account: req.account.name, key: req.key.name, tokens: req.tokens, holdNano: req.holdNano, month };
    if (acct.holds.has(req.eventId)) return { ok: true, hold };
    const w = this.window(req.account.name, req.key.name);
    w.trim(req.now - WINDOW_MS);
    const mk = `${month}|${req.key.name}`;
    const state: LimitState = {
      revoked: this.revoked.has(req.key.hash) || req.key.revoked,
      // The stored record's expiry, not the caller's copy: an expiry moved into the past stops the key at once.
      expired: isExpired(this.keys.get(req.key.hash)?.expiresAt, req.now),
      window: w,
      keyMonthCommittedNano: (acct.monthSpend.get(mk) ?? 0) + (acct.monthHeld.get(mk) ?? 0),
      availableNano: acct.creditedNano - acct.spentNano - acct.heldNano,
    };
    const v = decideAdmission(req, state);
    if (!v.ok) return toDecision(req, v.refusal, v.waitMs, v.leftNano);
    hold.slot = w.add(req.now, req.tokens);
    add(acct.monthHeld, mk, req.holdNano);
    acct.heldNano += req.holdNano;
    acct.holds.set(hold.id, { hold, deadline: req.now + (req.holdTtlMs ?? this.holdTtlMs) });
    return { ok: true, hold };
  }

  /** One line of a batch: charged once by line id, its worst case taken off the batch's hold. */
  private async settleLine(hold: Hold, s: LineSettlement): Promise<void> {
    checkAmount('costNano', s.costNano);
    checkAmount('lineHoldNano', s.lineHoldNano);
    checkAmount('feeNano', s.event.feeNano);
    const acct = this.account(hold.account);
    this.reclaim(acct, settledAt({ costNano: s.costNano, tokens: 0, event: s.event }));
    let done = acct.lines.get(hold.id);
    if (!done) acct.lines.set(hold.id, (done = new Set()));
    if (done.has(s.lineId)) return;
    done.add(s.lineId);
    const open = acct.holds.get(hold.id);
    const h = open?.hold ?? hold;
    if (open) {
      const cut = Math.min(s.lineHoldNano, open.hold.holdNano);
      acct.heldNano -= cut;
      add(acct.monthHeld, `${h.month}|${h.key}`, -cut);
      open.hold = { ...open.hold, holdNano: open.hold.holdNano - cut };
    }
    acct.spentNano += s.costNano;
    acct.feeNano += s.event.feeNano;
    add(acct.monthSpend, h.month, s.costNano);
    add(acct.monthSpend, `${h.month}|${h.key}`, s.costNano);
    this.sink.emit(s.event);
  }

  private async releaseHold(hold: Hold, now: number): Promise<void> {
    const acct = this.account(hold.account);
    this.reclaim(acct, now);
    const open = acct.holds.get(hold.id);
    // The line ids stay: results read again later still find their lines charged.
    if (open) release(acct, hold.id, open.hold);
  }

  async settle(hold: Hold, s: Settlement): Promise<void> {
    checkAmount('costNano', s.costNano);
    checkAmount('feeNano', s.event.feeNano);
    checkAmount('tokens', s.tokens);
    const acct = this.account(hold.account);
    const now = settledAt(s);
    this.reclaim(acct, now);
    if (acct.settled.has(hold.id) || acct.settledBefore.has(hold.id)) return;
    // Two generations of ids: the current one is retired whole once it is full or older than the hold TTL plus
    // SETTLED_MEMORY_MS, so the last SETTLED_KEEP ids (at least) are always remembered at O(1) per settle. (Deleting
    // one id at a time from the front of a Map leaves holes that every later walk from the front steps over.)
    if (acct.settled.size >= SETTLED_KEEP || now - acct.settledSince > this.holdTtlMs + SETTLED_MEMORY_MS) {
      acct.settledBefore = acct.settled;
      acct.settled = new Set();
      acct.settledSince = now;
    }
    acct.settled.add(hold.id);
    const open = acct.holds.get(hold.id);
    if (open) release(acct, hold.id, open.hold);
    // Charged to the month the hold counted against (its admission month), even if it expired meanwhile.
    const h = open?.hold ?? hold;
    acct.spentNano += s.costNano;
    acct.feeNano += s.event.feeNano;
    add(acct.monthSpend, h.month, s.costNano);
    add(acct.monthSpend, `${h.month}|${h.key}`, s.costNano);
    if (s.event.cache === 'hit') {
      add(acct.monthSpend, `hits:${h.month}|${h.key}`, 1);
      add(acct.monthSpend, `saved:${h.month}|${h.key}`, s.event.cacheSavedNano ?? 0);
    }
    const slot = open?.hold.slot ?? hold.slot;
    if (slot !== undefined) {
      const w = this.window(hold.account, h.key);
      if (s.freeSlot) w.forget(slot);
      else w.setTokens(slot, s.tokens);
    }
    this.sink.emit(s.event);
  }

  async record(event: UsageEvent): Promise<void> {
    this.sink.emit(event);
  }

  async view(account: string, keyName: string, now: number): Promise<AccountView> {
    const acct = this.account(account);
    const month = monthOf(now);
    return {
      balanceNano: acct.creditedNano - acct.spentNano,
      keyMonthSpendNano: acct.monthSpend.get(`${month}|${keyName}`) ?? 0,
      accountMonthSpendNano: acct.monthSpend.get(month) ?? 0,
      keyMonthCacheHits: acct.monthSpend.get(`hits:${month}|${keyName}`) ?? 0,
      keyMonthCacheSavedNano: acct.monthSpend.get(`saved:${month}|${keyName}`) ?? 0,
    };
  }

  async ledger(account: string): Promise<Ledger> {
    const a = this.account(account);
    return { creditedNano: a.creditedNano, spentNano: a.spentNano, feeNano: a.feeNano, heldNano: a.heldNano, openHolds: a.holds.size };
  }

  async close(): Promise<void> {}

  /** Runtime money outside the config (payments, refunds, disputes; gateway/state/billing-ledger.ts): may be negative. */
  adjustCredited(account: string, deltaNano: number): void {
    if (!Number.isSafeInteger(deltaNano)) throw new RangeError(`deltaNano must be a safe integer, got ${deltaNano}`);
    this.account(account).creditedNano += deltaNano;
  }

  /** Releases the holds whose deadline has passed: their replica never settled them. */
  private reclaim(acct: AccountState, now: number): void {
    for (const [id, { hold, deadline }] of acct.holds) if (deadline <= now) release(acct, id, hold);
  }

  private account(name: string): AccountState {
    let st = this.accounts.get(name);
    if (!st) {
      st = {
        creditedNano: 0,
        spentNano: 0,
        feeNano: 0,
        heldNano: 0,
        appliedCredits: new Set(),
        trialGranted: false,
        monthSpend: new Map(),
        monthHeld: new Map(),
        holds: new Map(),
        settled: new Set(),
        settledBefore: new Set(),
        settledSince: 0,
        lines: new Map(),
      };
      this.accounts.set(name, st);
    }
    return st;
  }

  private window(account: string, key: string): WindowLog {
    const id = `${account}|${key}`;
    let w = this.windows.get(id);
    if (!w) {
      w = new WindowLog();
      this.windows.set(id, w);
    }
    return w;
  }
}

function add(m: Map<string, number>, k: string, n: number): void {
  m.set(k, (m.get(k) ?? 0) + n);
}

function release(acct: AccountState, id: string, hold: Hold): void {
  acct.heldNano -= hold.holdNano;
  add(acct.monthHeld, `${hold.month}|${hold.key}`, -hold.holdNano);
  acct.holds.delete(id);
}
