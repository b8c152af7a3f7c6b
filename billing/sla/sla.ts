// SLA credits. For an account with Account.spec.billing.sla (the explicit enterprise flag), per UTC month:
//   - each model that served its calls has the month's uptime from the status history (gateway/availability: probes
//     and live traffic, uptime = 1 - (major outage time + half the partial outage time) / time observed; time not
//     observed and maintenance do not count); a model with no observation that month is left out;
//   - the account's uptime is those uptimes weighted by its calls;
//   - below the target, a service credit by tier of the account's uptime (slaCreditPercent: below 99.9% 10%, below
//     99.0% 25%, below 95.0% 100%) of the month's spend on the models that were below target, floored to the nano-USD.
// The credit is one billing-ledger step (op credit, event and object id sla-YYYY-MM): applied exactly once per
// account and month however often and wherever the job runs, in the same atomic step as Stripe payments.
import type { History } from '../../gateway/availability/history.ts';
import { uptime, type Segment } from '../../gateway/availability/uptime.ts';
import type { BillingLedger, BillingResult } from '../../gateway/state/billing-ledger.ts';
import { monthRange, SLA_RULE, type AccountBilling, type StatementSource, type UsageRow } from '../statements/statement.ts';

/** The service-credit tiers, lowest uptime first: below `belowPercent`, `creditPercent` of the affected spend. */
export const SLA_TIERS: ReadonlyArray<{ belowPercent: number; creditPercent: number }> = [
  { belowPercent: 95.0, creditPercent: 100 },
  { belowPercent: 99.0, creditPercent: 25 },
  { belowPercent: 99.9, creditPercent: 10 },
];

/** Uptime in percent, rounded to 1e-6 of a percent so a boundary compares the same whatever the float noise. */
export function uptimePercentOf(share: number): number {
  return Math.round(share * 100 * 1e6) / 1e6;
}

/**
 * Pure: the credit percentage for a month's uptime (percent) against the target (percent). At or above the target:
 * 0. Below it: the tier of the uptime; a boundary belongs to the upper side ("below 99.0%" is strict, so exactly 99.0%
 * is the 10% tier and exactly 95.0% the 25% tier). Below a target above 99.9% but not below 99.9%: the first tier, 10%.
 */
export function slaCreditPercent(uptimePercent: number, targetPercent: number): number {
  if (!(uptimePercent < targetPercent)) return 0;
  for (const t of SLA_TIERS) if (uptimePercent < t.belowPercent) return t.creditPercent;
  return SLA_TIERS[SLA_TIERS.length - 1]?.creditPercent ?? 0;
}

/** The rule in words, as the statement states it (statement.ts, so the statement needs no import of the job). */
export { SLA_RULE };

export interface SlaModel {
  model: string;
  requests: number;
  spendNano: number;
  /** Share in [0, 1]; null when the status history observed nothing that month. */
  uptime: number | null;
}

export interface SlaOutcome {
  month: string;
  targetPercent: number;
  /** Weighted by calls over the models with an uptime; null when none had one. */
  uptime: number | null;
  /** The tier's credit percentage (0 at or above target, or with no uptime). */
  creditPercent: number;
  models: SlaModel[];
  creditNano: number;
}

/** Pure: the month's SLA outcome from the account's usage rows and each model's uptime. */
export function slaOutcome(
  month: string,
  sla: NonNullable<AccountBilling['sla']>,
  usage: readonly UsageRow[],
  uptimeOf: (model: string) => number | null,
): SlaOutcome {
  const byModel = new Map<string, SlaModel>();
  for (const u of usage) {
    const m = byModel.get(u.model) ?? { model: u.model, requests: 0, spendNano: 0, uptime: null };
    m.requests += u.requests;
    m.spendNano += u.costNano;
    byModel.set(u.model, m);
  }
  const models = [...byModel.values()].sort((a, b) => (a.model < b.model ? -1 : 1));
  let calls = 0;
  let weighted = 0;
  for (const m of models) {
    m.uptime = uptimeOf(m.model);
    if (m.uptime === null || m.requests === 0) continue;
    calls += m.requests;
    weighted += m.requests * m.uptime;
  }
  const share = calls === 0 ? null : weighted / calls;
  const target = sla.target;
  const creditPercent = share === null ? 0 : slaCreditPercent(uptimePercentOf(share), target);
  let creditNano = 0;
  if (creditPercent > 0) {
    const affected = models.filter((m) => m.uptime !== null && uptimePercentOf(m.uptime) < target).reduce((a, m) => a + m.spendNano, 0);
    creditNano = Math.floor((affected * creditPercent) / 100);
  }
  return { month, targetPercent: target, uptime: share, creditPercent, models, creditNano };
}

export function slaId(month: string): string {
  return `sla-${month}`;
}

/** Applies the outcome's credit once (a second call, anywhere, changes nothing); null when there is nothing to credit. */
export async function applySlaCredit(ledger: BillingLedger, account: string, o: SlaOutcome, at: number): Promise<BillingResult | null> {
  if (o.creditNano <= 0) return null;
  const id = slaId(o.month);
  return ledger.apply({
    account,
    op: 'credit',
    eventId: id,
    objectId: id,
    paymentIntent: '',
    amountNano: o.creditNano,
    entry: { kind: 'sla', reference: id, at, eventId: id },
  });
}

export interface SlaJob {
  source: StatementSource;
  history: Pick<History, 'segments'>;
  ledger: BillingLedger;
}

/**
 * The month's SLA for one account, and its credit applied once. Only for a month that has ended (its uptime is
 * final); the credit is dated the month's last millisecond so it lands on that month's statement.
 */
export async function runSla(
  job: SlaJob,
  account: string,
  billing: AccountBilling | null,
  month: string,
  now: number,
): Promise<{ outcome: SlaOutcome; result: BillingResult | null } | null> {
  const r = monthRange(month);
  if (!r || !billing?.sla || now < r.end) return null;
  const data = await job.source.month(account, month);
  const segments = new Map<string, Segment[]>();
  for (const model of new Set(data.usage.map((u) => u.model))) segments.set(model, await job.history.segments(model, r.start));
  const outcome = slaOutcome(month, billing.sla, data.usage, (m) => uptime(segments.get(m) ?? [], r.start, r.end));
  return { outcome, result: await applySlaCredit(job.ledger, account, outcome, r.end - 1) };
}
