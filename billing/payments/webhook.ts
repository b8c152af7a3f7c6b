// POST /billing/stripe/webhook: the raw body's signature checked first (400 and nothing changes otherwise), then each
// event turned into ledger steps, each applied exactly once (gateway/state/billing-ledger.ts), whichever replica gets
// it, however often Stripe retries, in any order:
//   checkout.session.completed (paid), checkout.session.async_payment_succeeded -> credit amount_total / 100 USD to
//     client_reference_id (USD only; anything else is set aside and logged, never guessed). Same cs_ id: once.
//   checkout.session.async_payment_failed, completed with unpaid -> recorded, no money.
//   refund.created, refund.updated, refund.failed, charge.refund.updated (a refund), charge.refunded (its refunds
//     listed inline) -> each refund re_ followed to its furthest status: debited once when it succeeds, credited back
//     once if it then fails or is canceled; pending, failed and canceled refunds never debit; a payment's refunds
//     debit at most the payment in all. charge.refunded's amount_refunded (it counts pending refunds too) moves no
//     money. From the account the payment credited; charge.dispute.created -> debit, open dispute;
//     charge.dispute.funds_reinstated -> credit back.
// A refund or dispute that arrives before its payment is parked under its payment intent and applied when the payment
// is seen (both sides check after writing, so neither can miss the other).
import { isRefundStatus, type BillingLedger, type BillingStep, type EntryKind } from '../../gateway/state/billing-ledger.ts';
import { verifySignature } from './signature.ts';

/** 1 US cent in nano-USD. */
export const NANO_PER_CENT = 10_000_000;
/** Largest single amount taken from an event: 1 million USD (the ledger's bound per step). */
const MAX_CENTS = 99_999_999;
/** Events that carry a refund object. */
const REFUND_EVENTS = new Set(['refund.created', 'refund.updated', 'refund.failed', 'charge.refund.updated']);

export interface WebhookDeps {
  ledger: BillingLedger;
  webhookSecret: string;
  /** Whether an account of this name exists (credits to an unknown one are set aside). */
  knownAccount(account: string): Promise<boolean>;
  now(): number;
  log(level: 'info' | 'warn', message: string, fields: Record<string, unknown>): void;
  /** After any step: the account's ledger changed, or may have (Postgres copy; failures are retried next time). */
  onAccountTouched?(account: string): Promise<void>;
}

export interface WebhookAnswer {
  status: number;
  body: Record<string, unknown>;
}

type Obj = Record<string, unknown>;
type Step = Omit<BillingStep, 'account'>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const idOf = (v: unknown): string => (typeof v === 'string' ? v : str((v as Obj | null)?.id));

function cents(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_CENTS ? v : null;
}

/** A ledger step for the object `obj` (its ledger id and the reference shown), `cents` on payment intent `pi`. */
function step(op: Step['op'], kind: EntryKind, eventId: string, obj: [string, string], m: { pi: string; cents: number; at: number }): Step {
  return { op, eventId, objectId: obj[0], paymentIntent: m.pi, amountNano: m.cents * NANO_PER_CENT, entry: { kind, reference: obj[1], at: m.at, eventId } };
}

/** A refund seen in one status: a succeeded one can debit, a failed or canceled one can only credit back. */
function refundStep(eventId: string, r: Obj, pi: string, a: number, at: number): Step {
  const status = r.status as BillingStep['status'];
  const kind: EntryKind = status === 'succeeded' ? 'refund' : 'refund-reversed';
  return { ...step('refund', kind, eventId, [`refund:${str(r.id)}`, str(r.id)], { pi, cents: a, at }), status };
}

export class StripeWebhook {
  private readonly d: WebhookDeps;

  constructor(deps: WebhookDeps) {
    this.d = deps;
  }

  async handle(raw: Buffer, signature: string | undefined): Promise<WebhookAnswer> {
    const v = verifySignature(raw, signature, this.d.webhookSecret, Math.floor(this.d.now() / 1000));
    if (!v.ok && v.notJson) return { status: 400, body: { error: 'body is not JSON' } };
    if (!v.ok) {
      this.d.log('warn', 'Stripe webhook refused', { reason: v.reason });
      return { status: 400, body: { error: `signature: ${v.reason}` } };
    }
    // The event as Stripe's library parsed it, read field by field as untrusted JSON.
    const event = v.event as unknown as Obj | null;
    if (!event || typeof event !== 'object') return { status: 400, body: { error: 'not a Stripe event' } };
    const id = str(event.id);
    const type = str(event.type);
    const obj = ((event.data as Obj | undefined)?.object ?? null) as Obj | null;
    if (!id || !type || !obj || typeof obj !== 'object') return { status: 400, body: { error: 'not a Stripe event' } };
    const at = typeof event.created === 'number' ? event.created * 1000 : this.d.now();
    if (type.startsWith('checkout.session.')) return this.session(id, type, obj, at, event);
    if (REFUND_EVENTS.has(type) || type === 'charge.refunded' || type === 'charge.dispute.created' || type === 'charge.dispute.funds_reinstated') {
      return this.afterPayment(id, type, obj, at, event);
    }
    return { status: 200, body: { received: true, ignored: type } };
  }

  private async setAside(id: string, why: string, event: Obj): Promise<WebhookAnswer> {
    await this.d.ledger.setAside(id, why, event);
    this.d.log('warn', 'Stripe event set aside, not applied', { event: id, why });
    return { status: 200, body: { received: true, setAside: why } };
  }

  private async session(id: string, type: string, s: Obj, at: number, event: Obj): Promise<WebhookAnswer> {
    const cs = str(s.id);
    const account = str(s.client_reference_id) || str((s.metadata as Obj | undefined)?.account);
    const pi = idOf(s.payment_intent);
    let st: Step;
    if (type === 'checkout.session.async_payment_failed') st = step('record', 'payment-failed', id, [`failed:${cs}`, cs], { pi, cents: 0, at });
    else if (type === 'checkout.session.completed' && s.payment_status === 'unpaid')
      st = step('record', 'payment-unpaid', id, [`unpaid:${cs}`, cs], { pi, cents: 0, at });
    else if ((type === 'checkout.session.completed' && s.payment_status === 'paid') || type === 'checkout.session.async_payment_succeeded') {
      const amount = cents(s.amount_total);
      if (str(s.currency).toLowerCase() !== 'usd') return this.setAside(id, `currency ${str(s.currency) || '(none)'} is not usd`, event);
      if (amount === null) return this.setAside(id, 'amount_total is not a whole number of cents in range', event);
      st = step('credit', 'payment', id, [`checkout:${cs}`, cs], { pi, cents: amount, at });
    } else {
      return { status: 200, body: { received: true, ignored: type } };
    }
    if (!cs) return { status: 400, body: { error: 'session without an id' } };
    if (!account || !(await this.d.knownAccount(account))) return this.setAside(id, `no known account in client_reference_id (${account || 'none'})`, event);
    const r = await this.d.ledger.apply({ ...st, account });
    this.d.log('info', 'Stripe event applied', { event: id, type, account, verdict: r.verdict, deltaNano: r.deltaNano });
    if (pi && st.op === 'credit') {
      await this.d.ledger.route(pi, account);
      await this.drain(pi);
    }
    await this.d.onAccountTouched?.(account);
    return { status: 200, body: { received: true, verdict: r.verdict } };
  }

  private async afterPayment(id: string, type: string, o: Obj, at: number, event: Obj): Promise<WebhookAnswer> {
    const pi = idOf(o.payment_intent);
    if (!pi) return this.setAside(id, `${type} without a payment intent`, event);
    if (o.currency !== undefined && str(o.currency).toLowerCase() !== 'usd') return this.setAside(id, `currency ${str(o.currency)} is not usd`, event);
    const steps: Step[] = [];
    const bad = (): Promise<WebhookAnswer> => this.setAside(id, `${type} amount is not a whole number of cents in range`, event);
    if (REFUND_EVENTS.has(type)) {
      const a = cents(o.amount);
      if (a === null) return bad();
      if (!str(o.id)) return this.setAside(id, `${type} without a refund id`, event);
      if (!isRefundStatus(o.status)) return this.setAside(id, `${type} with refund status ${str(o.status) || '(none)'}`, event);
      steps.push(refundStep(id, o, pi, a, at));
    } else if (type === 'charge.refunded') {
      // Since API 2022-11-15 the refunds are not listed: their own refund.* events carry them.
      const listed = ((o.refunds as Obj | undefined)?.data ?? []) as Obj[];
      listed.forEach((r, i) => {
        const a = cents(r.amount);
        if (a !== null && str(r.id) && isRefundStatus(r.status)) steps.push(refundStep(`${id}#${i}`, r, pi, a, at));
      });
      if (steps.length === 0) {
        this.d.log('info', 'charge.refunded noted: its refunds move money by their own refund events', { event: id, amountRefunded: o.amount_refunded });
        return { status: 200, body: { received: true } };
      }
    } else {
      const a = cents(o.amount);
      if (a === null) return bad();
      const dp = str(o.id);
      steps.push(
        type === 'charge.dispute.created'
          ? step('dispute', 'dispute', id, [`dispute:${dp}`, dp], { pi, cents: a, at })
          : step('reinstate', 'dispute-reinstated', id, [`reinstated:${dp}`, dp], { pi, cents: a, at }),
      );
    }
    let account = await this.d.ledger.accountOf(pi);
    if (account === null) {
      for (const s of steps) await this.d.ledger.park(pi, s);
      // The payment may have been routed meanwhile: its drain could have run before the park above.
      account = await this.d.ledger.accountOf(pi);
      if (account === null) {
        this.d.log('info', 'Stripe event parked until its payment is seen', { event: id, type, paymentIntent: pi });
        return { status: 200, body: { received: true, parked: true } };
      }
      await this.drain(pi);
    } else {
      for (const s of steps) {
        const r = await this.d.ledger.apply({ ...s, account });
        this.logApplied('Stripe event applied', s, account, r.verdict, r.deltaNano);
      }
    }
    await this.d.onAccountTouched?.(account);
    return { status: 200, body: { received: true } };
  }

  private logApplied(message: string, s: Step, account: string, verdict: string, deltaNano: number): void {
    this.d.log('info', message, { event: s.eventId, op: s.op, status: s.status, account, verdict, deltaNano });
    // A succeeded refund debits at most what is left of its payment: say so when it was cut.
    if (s.op === 'refund' && s.status === 'succeeded' && verdict === 'applied' && -deltaNano < s.amountNano) {
      this.d.log('warn', 'Refund capped at what is left of its payment', {
        event: s.eventId,
        refund: s.entry.reference,
        account,
        amountNano: s.amountNano,
        deltaNano,
      });
    }
  }

  /** Applies the steps parked under a payment intent now routed to its account (idempotent: any replica may). */
  private async drain(pi: string): Promise<void> {
    const account = await this.d.ledger.accountOf(pi);
    if (account === null) return;
    for (const s of await this.d.ledger.parked(pi)) {
      const r = await this.d.ledger.apply({ ...s, account });
      this.logApplied('Parked Stripe event applied', s, account, r.verdict, r.deltaNano);
      await this.d.ledger.unpark(pi, s.eventId);
    }
  }
}
