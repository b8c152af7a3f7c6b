// One admission lease as its process keeps it (gateway/state/leases.ts): the slice of a key's RPM and TPM windows and
// of its account's money that Redis reserved for this process, what the calls admitted from it have used, the calls
// still running, and the settles waiting for the next flush. Pure bookkeeping: no I/O.
import type { AdmitRequest, Settlement } from './store.ts';

/** A call admitted from a lease: what it took from the slice (res: tokens of the reservation, 0 without a TPM limit). */
export interface LeasedCall {
  id: string;
  at: number;
  tokens: number;
  res: number;
  hold: number;
}

/** A settled call as lease.lua takes it (amounts as decimal strings, never a double's exponent form). */
export interface LeasedSettle {
  id: string;
  lease: string;
  key: string;
  month: string;
  cost: string;
  fee: string;
  tokens: string;
  res: string;
  hold: string;
  at: number;
  free: 0 | 1;
  hit: 0 | 1;
  saved: string;
  ev: string;
}

export interface LeaseGrant {
  id: string;
  account: string;
  key: string;
  hash: string;
  month: string;
  limits: { rpm: number | null; tpm: number | null; budget: number | null };
  slots: number;
  tokens: number;
  nano: number;
  /** The last `now` (the caller's clock, as admit.lua's window scores) a call may be admitted at: the slots' score. */
  endsAt: number;
  /** The same end on this process's monotonic clock (performance.now), so a clock step cannot stretch a lease. */
  endsMono: number;
}

export class Lease {
  readonly g: LeaseGrant;
  state: 'open' | 'closing' | 'closed' = 'open';
  used = 0;
  tokensUsed = 0;
  nanoUsed = 0;
  readonly inflight = new Map<string, LeasedCall>();
  pending: LeasedSettle[] = [];
  /** The flush in flight, if any (one at a time, so a release always follows it). */
  flushing: Promise<void> | null = null;
  /** Resolves once the lease is released in Redis (or given up): settles of its calls then go the per-call way. */
  closed: Promise<void> = Promise.resolve();
  timer: NodeJS.Timeout | null = null;
  /** The latest admission time (the caller's clock) seen: the `now` its flushes and release run at, as admit.lua. */
  lastAt: number;

  constructor(g: LeaseGrant, now: number) {
    this.g = g;
    this.lastAt = now;
  }

  /** Admits the call from the slice when it fits (same key, limits, month; before the lease's end), else null. */
  take(req: AdmitRequest, month: string, mono: number): LeasedCall | null {
    const g = this.g;
    const k = req.key;
    if (this.state !== 'open' || mono >= g.endsMono || req.now > g.endsAt || req.now < g.endsAt - 120_000) return null;
    if (k.revoked || month !== g.month || req.account.name !== g.account || k.name !== g.key || k.hash !== g.hash) return null;
    if (k.rpm !== g.limits.rpm || k.tpm !== g.limits.tpm || k.monthlyBudgetNano !== g.limits.budget) return null;
    if (this.used >= g.slots || this.nanoUsed + req.holdNano > g.nano) return null;
    const res = k.tpm === null ? 0 : req.tokens;
    if (this.tokensUsed + res > g.tokens) return null;
    this.used++;
    this.tokensUsed += res;
    this.nanoUsed += req.holdNano;
    if (req.now > this.lastAt) this.lastAt = req.now;
    const call = { id: req.eventId, at: req.now, tokens: req.tokens, res, hold: req.holdNano };
    this.inflight.set(call.id, call);
    return call;
  }

  /** A call of this lease settled: kept for the next flush. False: the lease is closing or its call is unknown. */
  settle(id: string, s: Settlement): boolean {
    const c = this.inflight.get(id);
    if (this.state !== 'open' || !c) return false;
    this.inflight.delete(id);
    const hit = s.event.cache === 'hit';
    this.pending.push({
      id,
      lease: this.g.id,
      key: this.g.key,
      month: this.g.month,
      cost: String(s.costNano),
      fee: String(s.event.feeNano),
      tokens: String(s.tokens),
      res: String(c.res),
      hold: String(c.hold),
      at: c.at,
      free: s.freeSlot ? 1 : 0,
      hit: hit ? 1 : 0,
      saved: String(hit ? (s.event.cacheSavedNano ?? 0) : 0),
      ev: JSON.stringify(s.event),
    });
    return true;
  }
}
