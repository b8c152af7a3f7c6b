// Runtime money from payments (Stripe): credits, refunds, disputes. Each step is applied exactly once, by event id and
// by the object it moves money for, in one atomic step of the account's ledger: billing.lua on Redis (every key in the
// account's slot {a:<account>}, so Redis Cluster works), the same rules in memory for one standalone process.
//
// Redis keys (<p> = prefix, <a> = account):
//   <p>:{a:<a>}:stripe        HASH  ev:<event id>, obj:<object id> (seen once); rs:<refund> (its furthest status and
//                                   amount); pa:<pi> (the payment's amount), rsum:<pi>, rdeb:<pi> (its refunds)
//   <p>:{a:<a>}:billing       LIST  applied entries "<deltaNano>|<json>", oldest first (the billing page's ledger)
//   <p>:{a:<a>}:acct          HASH  credited (payments add, refunds and disputes subtract), disputes (open)
//   <p>:billing:pi            HASH  payment intent -> account (set when a payment's session is seen)
//   <p>:billing:parked:<pi>   HASH  event id -> step JSON: a refund or dispute that came before its payment
//   <p>:billing:unapplied     HASH  event id -> JSON: events parked for a person (non-USD, unknown account)
//   <p>:billing:link          HASH  account -> Payment Link URL
import type { RedisClient } from './redis-connect.ts';
import { redisKeys } from '../contract/redis-keys.ts';
import { int } from './lua-script.ts';
import { SCRIPTS } from './scripts.ts';
import { checkAmount } from './store.ts';

export type BillingOp = 'credit' | 'record' | 'refund' | 'dispute' | 'reinstate';
/**
 * 'sla': an SLA service credit (billing/sla/sla.ts), applied by the same credit step, once per account and month.
 * 'refund-reversed': a refund debited when it succeeded, credited back when it later failed or was canceled.
 */
export type EntryKind = 'payment' | 'payment-failed' | 'payment-unpaid' | 'refund' | 'refund-reversed' | 'dispute' | 'dispute-reinstated' | 'sla';

/** A Stripe refund's status. It only moves forward: pending/requires_action, then succeeded, then failed/canceled. */
export type RefundStatus = 'pending' | 'requires_action' | 'succeeded' | 'failed' | 'canceled';
export const REFUND_RANK: Readonly<Record<RefundStatus, number>> = { pending: 0, requires_action: 0, succeeded: 1, failed: 2, canceled: 2 };
export const isRefundStatus = (s: unknown): s is RefundStatus => typeof s === 'string' && Object.hasOwn(REFUND_RANK, s);

export interface BillingEntry {
  kind: EntryKind;
  /** Stripe's object id (cs_…, re_…, ch_…, dp_…). */
  reference: string;
  /** When Stripe made the event (ms). */
  at: number;
  eventId: string;
}

export interface AppliedEntry extends BillingEntry {
  /** What the entry changed the balance by (negative for refunds and disputes). */
  deltaNano: number;
}

export interface BillingStep {
  account: string;
  op: BillingOp;
  eventId: string;
  /** The object the money is for; a second event for it changes nothing (a refund: only a later status does). */
  objectId: string;
  /** pi_… of the payment ('' when unknown; refunds need it). */
  paymentIntent: string;
  amountNano: number;
  /** op 'refund': the refund's status in this event (only a succeeded refund is debited). */
  status?: RefundStatus;
  entry: BillingEntry;
}

export type Verdict = 'applied' | 'duplicate-event' | 'duplicate-object' | 'nothing';
export interface BillingResult {
  verdict: Verdict;
  deltaNano: number;
}

export interface BillingLedger {
  apply(step: BillingStep): Promise<BillingResult>;
  entries(account: string): Promise<AppliedEntry[]>;
  openDisputes(account: string): Promise<number>;
  /** Records which account a payment intent paid (first writer wins: a payment belongs to one account). */
  route(paymentIntent: string, account: string): Promise<void>;
  accountOf(paymentIntent: string): Promise<string | null>;
  park(paymentIntent: string, step: Omit<BillingStep, 'account'>): Promise<void>;
  parked(paymentIntent: string): Promise<Array<Omit<BillingStep, 'account'>>>;
  unpark(paymentIntent: string, eventId: string): Promise<void>;
  setAside(eventId: string, why: string, event: unknown): Promise<void>;
  setAsideEvents(): Promise<Array<{ eventId: string; why: string }>>;
  paymentLink(account: string): Promise<string | null>;
  savePaymentLink(account: string, url: string): Promise<void>;
}

const MAX_NANO = 999_999_999_999_999;

function checkStep(s: BillingStep): void {
  checkAmount('amountNano', s.amountNano);
  if (s.amountNano > MAX_NANO) throw new RangeError(`amountNano must be below 1e15, got ${s.amountNano}`);
  if (!s.eventId || !s.objectId) throw new RangeError('a billing step needs an event id and an object id');
  if (s.op === 'refund' && !s.paymentIntent) throw new RangeError('a refund needs its payment intent');
  if (s.op === 'refund' && !isRefundStatus(s.status)) throw new RangeError(`unknown refund status ${String(s.status)}`);
}

export class RedisBilling implements BillingLedger {
  private readonly redis: RedisClient;
  private readonly p: string;

  constructor(redis: RedisClient, prefix: string) {
    this.redis = redis;
    this.p = prefix;
  }

  private keys(account: string): { acct: string; stripe: string; entries: string } {
    const k = redisKeys(this.p).account(account);
    return { acct: k.acct, stripe: k.stripe, entries: k.billing };
  }

  async apply(s: BillingStep): Promise<BillingResult> {
    checkStep(s);
    const k = this.keys(s.account);
    const r = await SCRIPTS.billing.run(this.redis, k, {
      op: s.op,
      eventId: s.eventId,
      objectId: s.objectId,
      paymentIntent: s.paymentIntent,
      amountNano: String(s.amountNano),
      entryJson: JSON.stringify(s.entry),
      status: s.status ?? '',
    });
    const [verdict, delta] = Array.isArray(r) ? r : [];
    return { verdict: verdict as Verdict, deltaNano: int(delta) };
  }

  async entries(account: string): Promise<AppliedEntry[]> {
    const raw = await this.redis.lrange(this.keys(account).entries, 0, -1);
    return raw.map((x) => {
      const bar = x.indexOf('|');
      return { ...(JSON.parse(x.slice(bar + 1)) as BillingEntry), deltaNano: Number(x.slice(0, bar)) };
    });
  }

  async openDisputes(account: string): Promise<number> {
    return int(await this.redis.hget(this.keys(account).acct, 'disputes'));
  }

  async route(pi: string, account: string): Promise<void> {
    await this.redis.hsetnx(`${this.p}:billing:pi`, pi, account);
  }

  async accountOf(pi: string): Promise<string | null> {
    return this.redis.hget(`${this.p}:billing:pi`, pi);
  }

  async park(pi: string, step: Omit<BillingStep, 'account'>): Promise<void> {
    await this.redis.hsetnx(`${this.p}:billing:parked:${pi}`, step.eventId, JSON.stringify(step));
  }

  async parked(pi: string): Promise<Array<Omit<BillingStep, 'account'>>> {
    return Object.values(await this.redis.hgetall(`${this.p}:billing:parked:${pi}`)).map((x) => JSON.parse(x) as Omit<BillingStep, 'account'>);
  }

  async unpark(pi: string, eventId: string): Promise<void> {
    await this.redis.hdel(`${this.p}:billing:parked:${pi}`, eventId);
  }

  async setAside(eventId: string, why: string, event: unknown): Promise<void> {
    await this.redis.hsetnx(`${this.p}:billing:unapplied`, eventId, JSON.stringify({ why, event }));
  }

  async setAsideEvents(): Promise<Array<{ eventId: string; why: string }>> {
    const all = await this.redis.hgetall(`${this.p}:billing:unapplied`);
    return Object.entries(all).map(([eventId, v]) => ({ eventId, why: (JSON.parse(v) as { why: string }).why }));
  }

  async paymentLink(account: string): Promise<string | null> {
    return this.redis.hget(`${this.p}:billing:link`, account);
  }

  async savePaymentLink(account: string, url: string): Promise<void> {
    await this.redis.hset(`${this.p}:billing:link`, account, url);
  }
}

/** What the memory ledger needs from the store it adds money to (MemoryStore.adjustCredited). */
export interface CreditAdjuster {
  adjustCredited(account: string, deltaNano: number): void;
}

/** The same rules as billing.lua, for one process (JavaScript runs one step at a time: atomic by construction). */
export class MemoryBilling implements BillingLedger {
  private readonly store: CreditAdjuster;
  private readonly seen = new Map<string, Set<string>>();
  /** Per account|payment intent: the refunds now succeeded, and what they debited (at most the payment). */
  private readonly refunds = new Map<string, { sum: number; debited: number }>();
  private readonly refundState = new Map<string, { rank: number; amount: number }>();
  private readonly paid = new Map<string, number>();
  private readonly applied = new Map<string, AppliedEntry[]>();
  private readonly disputes = new Map<string, number>();
  private readonly routes = new Map<string, string>();
  private readonly parkedSteps = new Map<string, Map<string, Omit<BillingStep, 'account'>>>();
  private readonly aside = new Map<string, string>();
  private readonly links = new Map<string, string>();

  constructor(store: CreditAdjuster) {
    this.store = store;
  }

  async apply(s: BillingStep): Promise<BillingResult> {
    checkStep(s);
    let seen = this.seen.get(s.account);
    if (!seen) this.seen.set(s.account, (seen = new Set()));
    if (seen.has(`ev:${s.eventId}`)) return { verdict: 'duplicate-event', deltaNano: 0 };
    seen.add(`ev:${s.eventId}`);
    const push = (deltaNano: number): BillingResult => {
      if (deltaNano !== 0) this.store.adjustCredited(s.account, deltaNano);
      const list = this.applied.get(s.account) ?? [];
      list.push({ ...s.entry, deltaNano });
      this.applied.set(s.account, list);
      return { verdict: 'applied', deltaNano };
    };
    if (s.op === 'refund') {
      const prev = this.refundState.get(`${s.account}|${s.objectId}`);
      if (!prev && seen.has(`obj:${s.objectId}`)) return { verdict: 'nothing', deltaNano: 0 };
      const r0 = prev?.rank ?? -1;
      const amount = prev?.amount ?? s.amountNano;
      const r1 = REFUND_RANK[s.status as RefundStatus];
      if (r1 <= r0) return { verdict: 'nothing', deltaNano: 0 };
      this.refundState.set(`${s.account}|${s.objectId}`, { rank: r1, amount });
      const key = `${s.account}|${s.paymentIntent}`;
      const p = this.refunds.get(key) ?? { sum: 0, debited: 0 };
      const sum = r1 === 1 ? p.sum + amount : r0 === 1 ? p.sum - amount : p.sum;
      if (sum === p.sum) return { verdict: 'nothing', deltaNano: 0 };
      const paid = this.paid.get(key);
      const debited = paid === undefined ? sum : Math.min(sum, paid);
      const delta = p.debited - debited;
      this.refunds.set(key, { sum, debited });
      return delta === 0 ? { verdict: 'nothing', deltaNano: 0 } : push(delta);
    }
    if (seen.has(`obj:${s.objectId}`)) return { verdict: 'duplicate-object', deltaNano: 0 };
    seen.add(`obj:${s.objectId}`);
    if (s.op === 'credit') {
      const key = `${s.account}|${s.paymentIntent}`;
      if (s.paymentIntent && !this.paid.has(key)) this.paid.set(key, s.amountNano);
      return push(s.amountNano);
    }
    if (s.op === 'record') return push(0);
    const d = s.op === 'dispute' ? 1 : -1;
    this.disputes.set(s.account, (this.disputes.get(s.account) ?? 0) + d);
    return push(d === 1 ? -s.amountNano : s.amountNano);
  }

  async entries(account: string): Promise<AppliedEntry[]> {
    return [...(this.applied.get(account) ?? [])];
  }

  async openDisputes(account: string): Promise<number> {
    return this.disputes.get(account) ?? 0;
  }

  async route(pi: string, account: string): Promise<void> {
    if (!this.routes.has(pi)) this.routes.set(pi, account);
  }

  async accountOf(pi: string): Promise<string | null> {
    return this.routes.get(pi) ?? null;
  }

  async park(pi: string, step: Omit<BillingStep, 'account'>): Promise<void> {
    const m = this.parkedSteps.get(pi) ?? new Map<string, Omit<BillingStep, 'account'>>();
    if (!m.has(step.eventId)) m.set(step.eventId, step);
    this.parkedSteps.set(pi, m);
  }

  async parked(pi: string): Promise<Array<Omit<BillingStep, 'account'>>> {
    return [...(this.parkedSteps.get(pi)?.values() ?? [])];
  }

  async unpark(pi: string, eventId: string): Promise<void> {
    this.parkedSteps.get(pi)?.delete(eventId);
  }

  async setAside(eventId: string, why: string): Promise<void> {
    if (!this.aside.has(eventId)) this.aside.set(eventId, why);
  }

  async setAsideEvents(): Promise<Array<{ eventId: string; why: string }>> {
    return [...this.aside].map(([eventId, why]) => ({ eventId, why }));
  }

  async paymentLink(account: string): Promise<string | null> {
    return this.links.get(account) ?? null;
  }

  async savePaymentLink(account: string, url: string): Promise<void> {
    this.links.set(account, url);
  }
}
