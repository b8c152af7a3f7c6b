// Leased admission (SVC_ADMISSION_LEASES=1, docs/limits-at-scale.md): while a key is far from its caps, a process
// leases a slice of its RPM and TPM windows and of its account's money (budget and balance) in one script
// (lua/lease.lua), admits calls from the slice without a Redis round trip, and settles them in batches (every
// flushMs, at renewal, at drain). Redis keeps the slice reserved where the per-call path reads it, so the sum of every
// process's leases and all settled spend never exceeds a cap. Near a cap no lease is granted and calls take the
// per-call path; a call refused there while other processes hold leases asks for them back (they release at their
// next flush, or at the lease's end) and is tried once more, so N calls against caps that fit N-1 serve N-1.
// Revocation: a lease is granted only to a key that is not revoked and every flush reports a revocation; a process
// admits from its lease until it hears of it (at its next flush, at most the lease's life). Expiry: no lease outlives
// the key (granted only if the key is valid past the lease's end, on Redis' clock).
import { randomBytes } from 'node:crypto';
import { Lease, type LeasedCall, type LeasedSettle } from './lease.ts';
import { monthOf, type AdmitDecision, type AdmitRequest, type Hold, type Settlement } from './store.ts';

export interface LeaseOptions {
  /** How long a lease admits calls (default 1000 ms): also the longest a revocation may take to reach every process. */
  lifeMs?: number;
  /** Settles of leased calls are written every this often (default 5 ms): what a SIGKILL can lose. */
  flushMs?: number;
  /** Most calls one lease admits (default 64). */
  maxSlots?: number;
  /** Past its end, a lease's unused money is reclaimed by Redis after this (default 5000 ms; a crashed process). */
  graceMs?: number;
}

export interface LeaseBatch {
  s?: LeasedSettle[];
  r?: {
    lease: string;
    key: string;
    month: string;
    deadline: number;
    inflight: Array<Omit<LeasedCall, 'tokens' | 'res' | 'hold'> & Record<'tokens' | 'res' | 'hold', string>>;
  };
  g?: {
    lease: string;
    hash: string;
    key: string;
    month: string;
    life: number;
    deadline: number;
    rpm: number;
    tpm: number;
    budget: number;
    tokens: string;
    hold: string;
    max: number;
    revoked: 0 | 1;
  };
  d?: number;
  /** What `d` asks back: the key's leases (RPM, TPM, budget refusals) or the account's (balance). */
  ds?: 'key' | 'account';
  h?: string;
  /** The key the script runs for (set by the store). */
  k?: string;
}

export interface LeaseReply {
  granted: { slots: number; tokens: number; nano: number } | null;
  demand: boolean;
  revoked: boolean;
  live: number;
}

/** What leasing needs of the store: the script, the per-call path, and its settle (which retries). */
export interface LeaseBackend {
  run(account: string, key: string, batch: LeaseBatch, now: number): Promise<LeaseReply>;
  admit(req: AdmitRequest): Promise<AdmitDecision>;
  settle(hold: Hold, s: Settlement): Promise<void>;
  holdTtlMs: number;
  warn(message: string, err?: unknown): void;
}

/** What leasing did so far in this process, for /metrics (gateway/http/lease-metrics.ts). */
export interface LeaseCounts {
  /** Lease requests by outcome: granted, refused (near a cap, revoked, asked back), failed (Redis did not answer). */
  grants: { granted: number; refused: number; failed: number };
  /** Admitted calls by path: from a lease held here, or by the per-call script. */
  admitted: { lease: number; per_call: number };
}

/** How long a lease admits calls: also the longest a revocation waits for the leases of its key to end. */
export const LEASE_LIFE_MS = 1000;

const CAP_CODES = new Set(['rate_limited', 'budget_exceeded', 'insufficient_balance']);

export class Leases {
  private readonly b: LeaseBackend;
  private readonly lifeMs: number;
  private readonly flushMs: number;
  private readonly maxSlots: number;
  private readonly graceMs: number;
  private readonly byKey = new Map<string, Lease>();
  private readonly byId = new Map<string, Lease>();
  private readonly granting = new Map<string, Promise<void>>();
  private readonly noLeaseUntil = new Map<string, number>();
  private readonly demands = new Map<string, Promise<boolean>>();
  private readonly proc = randomBytes(6).toString('hex');
  private seq = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  private draining = false;
  private backoffUntil = 0;
  readonly counts: LeaseCounts = { grants: { granted: 0, refused: 0, failed: 0 }, admitted: { lease: 0, per_call: 0 } };

  constructor(backend: LeaseBackend, opts: LeaseOptions = {}) {
    this.b = backend;
    this.lifeMs = opts.lifeMs ?? LEASE_LIFE_MS;
    this.flushMs = opts.flushMs ?? 5;
    this.maxSlots = opts.maxSlots ?? 64;
    this.graceMs = opts.graceMs ?? 5000;
  }

  /** Leases held now (tests and metrics). */
  get held(): number {
    return this.byKey.size;
  }

  async admit(req: AdmitRequest): Promise<AdmitDecision> {
    const k = `${req.account.name}|${req.key.name}`;
    const month = monthOf(req.now);
    const local = this.takeLocal(k, req, month);
    if (local) return local;
    // The same call admitted twice (a resent admission) holds once.
    const again = this.readmitted(k, req, month);
    if (again) return again;
    const wait = this.granting.get(k);
    if (wait) {
      await wait;
      const again = this.takeLocal(k, req, month);
      if (again) return again;
    } else if (!this.draining && !req.key.revoked && (this.noLeaseUntil.get(k) ?? 0) <= performance.now()) {
      const p = this.grant(k, req, month);
      this.granting.set(k, p);
      try {
        await p;
      } finally {
        this.granting.delete(k);
      }
      const again = this.takeLocal(k, req, month);
      if (again) return again;
    }
    return this.perCall(req);
  }

  async settle(hold: Hold, s: Settlement): Promise<void> {
    const l = hold.lease === undefined ? undefined : this.byId.get(hold.lease);
    if (l?.settle(hold.id, s)) {
      this.scheduleFlush();
      return;
    }
    // Released meanwhile: once the release is written the call is an ordinary hold (or its slice was reclaimed).
    if (l) await l.closed;
    await this.b.settle(hold, s);
  }

  /** Writes every pending settle and gives every lease back (graceful drain: nothing is lost). */
  async drain(): Promise<void> {
    this.draining = true;
    await Promise.allSettled([...this.granting.values()]);
    await Promise.all([...this.byId.values()].map((l) => this.close(l)));
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
  }

  /** Gives every lease back now (its calls still running become ordinary holds); leasing goes on afterwards. */
  async releaseAll(): Promise<void> {
    await Promise.all([...this.byId.values()].map((l) => this.close(l)));
  }

  /** Writes every settle waiting for a flush now (readers that must see them: tests, the ledger of a drain). */
  async flushAll(): Promise<void> {
    for (const l of this.byId.values()) {
      if (l.flushing) await l.flushing;
      if (l.state === 'open' && l.pending.length > 0) {
        l.flushing = this.flush(l);
        await l.flushing;
      }
    }
  }

  private readmitted(k: string, req: AdmitRequest, month: string): AdmitDecision | null {
    const l = this.byKey.get(k);
    const c = l?.inflight.get(req.eventId);
    if (!l || !c) return null;
    return { ok: true, hold: { id: c.id, account: l.g.account, key: l.g.key, tokens: c.tokens, holdNano: c.hold, month, lease: l.g.id } };
  }

  private takeLocal(k: string, req: AdmitRequest, month: string): AdmitDecision | null {
    const l = this.byKey.get(k);
    if (!l || l.inflight.has(req.eventId)) return null;
    const c = l.take(req, month, performance.now());
    if (c) this.counts.admitted.lease++;
    if (c) return { ok: true, hold: { id: c.id, account: l.g.account, key: l.g.key, tokens: c.tokens, holdNano: c.hold, month, lease: l.g.id } };
    // Used up, ended or stale (limits changed, key revoked, a new month): given back now.
    void this.close(l);
    return null;
  }

  /** Far from the caps, a new lease for the key (the old one, used up, is being released by its own script). */
  private async grant(k: string, req: AdmitRequest, month: string): Promise<void> {
    const id = `${this.proc}.${(++this.seq).toString(36)}`;
    const mono = performance.now();
    const key = req.key;
    const batch: LeaseBatch = {
      g: {
        lease: id,
        hash: key.hash,
        key: key.name,
        month,
        life: this.lifeMs,
        deadline: req.now + this.lifeMs + this.graceMs,
        rpm: key.rpm ?? -1,
        tpm: key.tpm ?? -1,
        budget: key.monthlyBudgetNano ?? -1,
        tokens: String(req.tokens),
        hold: String(req.holdNano),
        max: this.maxSlots,
        revoked: key.revoked ? 1 : 0,
      },
    };
    let reply: LeaseReply;
    try {
      reply = await this.b.run(req.account.name, key.name, batch, req.now);
    } catch (err) {
      this.counts.grants.failed++;
      throw err;
    }
    this.counts.grants[reply.granted ? 'granted' : 'refused']++;
    if (!reply.granted) {
      // Near a cap (or revoked, expiring, asked back): the per-call path for a lease's life.
      this.noLeaseUntil.set(k, mono + this.lifeMs);
      return;
    }
    this.noLeaseUntil.delete(k);
    const l = new Lease(
      {
        id,
        account: req.account.name,
        key: key.name,
        hash: key.hash,
        month,
        limits: { rpm: key.rpm, tpm: key.tpm, budget: key.monthlyBudgetNano },
        slots: reply.granted.slots,
        tokens: reply.granted.tokens,
        nano: reply.granted.nano,
        endsAt: req.now + this.lifeMs,
        endsMono: mono + this.lifeMs,
      },
      req.now,
    );
    this.byKey.set(k, l);
    this.byId.set(id, l);
    l.timer = setTimeout(() => void this.close(l), this.lifeMs).unref();
  }

  /** The per-call path; a refusal at a cap while other processes hold leases asks for them back and tries once more. */
  private async perCall(req: AdmitRequest): Promise<AdmitDecision> {
    const d = await this.perCallTried(req);
    if (d.ok) this.counts.admitted.per_call++;
    return d;
  }

  private async perCallTried(req: AdmitRequest): Promise<AdmitDecision> {
    const first = await this.b.admit(req);
    if (first.ok || !CAP_CODES.has(first.code)) return first;
    if (!(await this.askBack(req, first.code === 'insufficient_balance' ? 'account' : 'key'))) return capRetry(first);
    return capRetry(await this.b.admit(req));
  }

  /**
   * Gives this process's leases back (of the key; of the account for the balance), asks the other processes for
   * theirs, and waits until they are (true) or none was held (false).
   */
  private askBack(req: AdmitRequest, scope: 'key' | 'account'): Promise<boolean> {
    const account = req.account.name;
    const key = req.key.name;
    const id = scope === 'account' ? account : `${account}|${key}`;
    const running = this.demands.get(id);
    if (running) return running;
    const p = (async (): Promise<boolean> => {
      const mine = [...this.byId.values()].filter((l) => l.g.account === account && (scope === 'account' || l.g.key === key));
      await Promise.all(mine.map((l) => this.close(l)));
      let reply = await this.b.run(account, key, { d: 2 * this.lifeMs, ds: scope }, req.now);
      if (reply.live === 0) return false;
      const start = performance.now();
      const end = start + this.lifeMs + 500;
      while (reply.live > 0 && performance.now() < end) {
        await new Promise((r) => setTimeout(r, 10));
        reply = await this.b.run(account, key, { ds: scope }, req.now + (performance.now() - start));
      }
      return true;
    })();
    this.demands.set(id, p);
    void p.finally(() => this.demands.delete(id)).catch(() => {});
    return p.catch(() => false);
  }

  /** Stops admitting from the lease and hands back what its release must write; `done` once written. */
  private detach(l: Lease): { batch: LeaseBatch; done: () => void } {
    let done = (): void => {};
    l.closed = new Promise<void>((resolve) => {
      done = (): void => {
        l.state = 'closed';
        this.byId.delete(l.g.id);
        resolve();
      };
    });
    const inflight = [...l.inflight.values()].map((c) => ({ id: c.id, at: c.at, tokens: String(c.tokens), res: String(c.res), hold: String(c.hold) }));
    l.inflight.clear();
    const s = l.pending;
    l.pending = [];
    const deadline = l.lastAt + this.b.holdTtlMs;
    return { batch: { s, r: { lease: l.g.id, key: l.g.key, month: l.g.month, deadline, inflight } }, done };
  }

  private close(l: Lease): Promise<void> {
    if (l.state !== 'open') return l.closed;
    const flushing = l.flushing;
    // A flush in flight goes first, so its settles are never sent twice at once (they would be no-ops anyway).
    const run = async (): Promise<void> => {
      if (flushing) await flushing;
      const { batch, done } = this.detach(l);
      try {
        await this.b.run(l.g.account, l.g.key, batch, l.lastAt);
      } catch (err) {
        this.giveUp(l, batch, err);
      } finally {
        done();
      }
    };
    l.state = 'closing';
    const k = `${l.g.account}|${l.g.key}`;
    if (this.byKey.get(k) === l) this.byKey.delete(k);
    if (l.timer) clearTimeout(l.timer);
    const p = run();
    l.closed = p;
    return p;
  }

  /**
   * A release Redis did not take: its settles go the per-call way (settle.lua, retried until Redis is back); its calls
   * still running settle there too; the slice itself is reclaimed by Redis at the lease's deadline.
   */
  private giveUp(l: Lease, batch: LeaseBatch, err: unknown): void {
    this.b.warn('Releasing an admission lease failed; its settles are retried one by one', err);
    for (const s of batch.s ?? []) void this.b.settle(holdOf(l, s), settlementOf(s)).catch(() => {});
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    // After a failed flush (Redis unreachable) the next waits 100 ms, not flushMs: no tight loop of failing writes.
    const wait = Math.max(this.flushMs, this.backoffUntil - performance.now());
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      for (const l of this.byId.values()) if (l.state === 'open' && l.pending.length > 0 && !l.flushing) l.flushing = this.flush(l);
    }, wait);
  }

  private async flush(l: Lease): Promise<void> {
    const s = l.pending;
    l.pending = [];
    try {
      const reply = await this.b.run(l.g.account, l.g.key, { s, h: l.g.hash }, l.lastAt);
      if (reply.demand || reply.revoked) {
        l.flushing = null;
        void this.close(l);
      }
    } catch (err) {
      // Kept for the next flush or the release (each settle is applied once, by its call id).
      l.pending = s.concat(l.pending);
      this.backoffUntil = performance.now() + 100;
      this.b.warn('Flushing leased settles failed; retrying', err);
    } finally {
      l.flushing = null;
      if (l.pending.length > 0) this.scheduleFlush();
    }
  }
}

/** A refusal's retry-after at most a minute (a lease's slots are scored at its end, a little past the window). */
function capRetry(d: AdmitDecision): AdmitDecision {
  if (d.ok || d.retryAfterSec === undefined || d.retryAfterSec <= 60) return d;
  return { ...d, retryAfterSec: 60 };
}

function holdOf(l: Lease, s: LeasedSettle): Hold {
  return { id: s.id, account: l.g.account, key: s.key, tokens: Number(s.tokens), holdNano: Number(s.hold), month: s.month };
}

function settlementOf(s: LeasedSettle): Settlement {
  return { costNano: Number(s.cost), tokens: Number(s.tokens), event: JSON.parse(s.ev) as Settlement['event'], freeSlot: s.free === 1 };
}
