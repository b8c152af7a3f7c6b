// Stripe events as Stripe sends them (the fields the webhook reads, in Stripe's shapes), and signing them as Stripe
// does (billing/payments/signature.ts: t=<unix>,v1=HMAC-SHA256(secret, "<t>.<body>")).
import { signatureHeader } from '../../billing/payments/signature.ts';

let n = 0;
const id = (p: string): string => `${p}_test_${Date.now().toString(36)}${(n++).toString(36)}`;

export interface StripeEvent {
  id: string;
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
}

function event(type: string, object: Record<string, unknown>): StripeEvent {
  return { id: id('evt'), type, created: Math.floor(Date.now() / 1000), data: { object } };
}

export function session(o: { account: string; cents: number; paid?: boolean; currency?: string; pi?: string; type?: string }): StripeEvent {
  return event(o.type ?? 'checkout.session.completed', {
    id: id('cs'),
    object: 'checkout.session',
    mode: 'payment',
    client_reference_id: o.account,
    amount_total: o.cents,
    currency: o.currency ?? 'usd',
    payment_status: o.paid === false ? 'unpaid' : 'paid',
    payment_intent: o.pi ?? id('pi'),
  });
}

/** The same session in another event (async_payment_succeeded after completed unpaid, or a second completed). */
export function sameSession(s: StripeEvent, type: string, paid = true): StripeEvent {
  return { ...event(type, { ...s.data.object, payment_status: paid ? 'paid' : 'unpaid' }) };
}

export type RefundStatus = 'pending' | 'requires_action' | 'succeeded' | 'failed' | 'canceled';

/** A refund event (refund.created by default; refund.updated, refund.failed) with the refund in `status`. */
export function refund(pi: string, cents: number, refundId = id('re'), status: RefundStatus = 'succeeded', type = 'refund.created'): StripeEvent {
  return event(type, { id: refundId, object: 'refund', amount: cents, currency: 'usd', payment_intent: pi, charge: `ch_for_${pi}`, status });
}

export function chargeRefunded(pi: string, amountRefunded: number, refunds: Array<{ id: string; amount: number; status: RefundStatus }> = []): StripeEvent {
  return event('charge.refunded', {
    id: `ch_for_${pi}`,
    object: 'charge',
    amount_refunded: amountRefunded,
    currency: 'usd',
    payment_intent: pi,
    refunds: { object: 'list', data: refunds.map((r) => ({ ...r, object: 'refund' })) },
  });
}

export function dispute(pi: string, cents: number, type = 'charge.dispute.created', disputeId = id('dp')): StripeEvent {
  return event(type, { id: disputeId, object: 'dispute', amount: cents, currency: 'usd', payment_intent: pi, charge: `ch_for_${pi}` });
}

export function signed(e: StripeEvent | string, secret: string, at = Math.floor(Date.now() / 1000)): { body: string; headers: Record<string, string> } {
  const body = typeof e === 'string' ? e : JSON.stringify(e);
  return { body, headers: { 'content-type': 'application/json', 'stripe-signature': signatureHeader(body, secret, at) } };
}
