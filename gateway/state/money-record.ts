// One account's money as the Postgres ledger records it: what a rebuild writes back into a Redis that lost its data
// (restore-account.lua). Pure: the Postgres reader (gateway/usage/postgres/money-record.ts) fills it; the Stripe
// objects each step moved money for are named as billing.lua names them, so a resent webhook is recognised.
import type { EntryKind } from './billing-ledger.ts';

export interface StripeRow {
  kind: EntryKind;
  /** Stripe's event id (or sla-YYYY-MM): the ledger row's credit_id. */
  eventId: string;
  /** Stripe's object (cs_…, re_…, dp_…) or the SLA credit's id. */
  reference: string;
  amountNano: number;
  at: number;
}

export interface MoneyRecord {
  account: string;
  /** The trial as granted (null: never granted). */
  trialNano: number | null;
  /** Config credit ids applied. */
  creditIds: string[];
  /** Every credit: trial, config credits, payments, refunds, disputes, SLA credits (signed sum). */
  creditedNano: number;
  spentNano: number;
  feeNano: number;
  /** This month's spend fields of the account's spend hash: "<month>", "<month>|<key>", "fee:<month>", hits, saved. */
  spend: Record<string, number>;
  stripe: StripeRow[];
}

/**
 * Receives, while the record is read, the usage events the ledger recorded lately, one account's at a time in slices:
 * [event id, ms to remember it from (the read's time)]. The restore marks them as settled, so a settle that Redis
 * applied just before it lost its data (its answer lost with the connection, retried by the gateway after the rebuild)
 * is a no-op instead of a second charge on top of the spend restored from the ledger. A busy account has hundreds of
 * thousands: they go to Redis as they are read (money-restore.ts `SettledStage`), never held in the process at once.
 */
export type SettledSink = (account: string, ids: Array<[string, number]>) => Promise<void>;

/** The object billing.lua marks as applied for a Stripe step of this kind (webhook.ts, sla.ts name them). */
function stripeFields(r: StripeRow): string[] {
  switch (r.kind) {
    case 'payment':
      return ['obj:checkout:' + r.reference, r.eventId];
    case 'dispute':
      return ['obj:dispute:' + r.reference, r.eventId];
    case 'dispute-reinstated':
      return ['obj:reinstated:' + r.reference, r.eventId];
    case 'sla':
      return ['obj:' + r.reference, r.eventId];
    case 'refund':
      return ['rs:refund:' + r.reference, `1|${Math.abs(r.amountNano)}`];
    case 'refund-reversed':
      return ['rs:refund:' + r.reference, `2|${Math.abs(r.amountNano)}`];
    case 'payment-failed':
    case 'payment-unpaid':
      return [];
    default: {
      const never: never = r.kind;
      return never;
    }
  }
}

/** The record as restore-account.lua takes it (amounts as decimal strings: exact in Lua, whose numbers are doubles). */
export function restoreJson(r: MoneyRecord): string {
  const open = r.stripe.filter((s) => s.kind === 'dispute').length - r.stripe.filter((s) => s.kind === 'dispute-reinstated').length;
  // A refund's last status wins (rs: keeps the furthest one), so later rows overwrite earlier ones in order.
  const stripe = r.stripe.map((s) => [s.eventId, String(s.amountNano), ...stripeFields(s)]);
  return JSON.stringify({
    ...(r.trialNano === null ? {} : { trial: String(r.trialNano) }),
    credited: String(r.creditedNano),
    spent: String(r.spentNano),
    fee: String(r.feeNano),
    disputes: String(Math.max(0, open)),
    credits: r.creditIds,
    spend: Object.fromEntries(Object.entries(r.spend).map(([k, v]) => [k, String(v)])),
    stripe,
    billing: r.stripe.map((s) => `${s.amountNano}|${JSON.stringify({ kind: s.kind, reference: s.reference, at: s.at, eventId: s.eventId })}`),
  });
}
