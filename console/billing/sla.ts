// SLA credits. For an account with Account.spec.billing.sla (the explicit enterprise flag), per UTC month:
//   - each model that served its calls has the month's uptime from the status history (gateway/availability: probes
//     and live traffic, uptime = 1 - (major outage time + half the partial outage time) / time observed; time not
//     observed and maintenance do not count); a model with no observation that month is left out;
//   - the account's uptime is those uptimes weighted by its calls;
//   - below the target, the credit is creditPercent % of the month's spend on the models that were below target,
//     floored to the nano-USD.
// The credit is one billing-ledger step (op credit, event and object id sla-YYYY-MM): applied exactly once per
// account and month however often and wherever the job runs, in the same atomic step as Stripe payments.
import type { History } from '../../gateway/availability/history.ts';
import { uptime, type Segment } from '../../gateway/availability/uptime.ts';
import type { BillingLedger, BillingResult } from '../../gateway/state/billing-ledger.ts';
import { monthRange, type AccountBilling, type StatementSource, type UsageRow } from './statement.ts';

export const SLA_RULE = 'SLA: per UTC month, each model\'s uptime = 1 - (time in major outage + half the time in partial outage) '
  + '/ time observed by the status probes and live traffic (maintenance and unobserved time excluded); the account\'s uptime is '
  + 'the uptime of the models that served its calls, weighted by its calls. Below the target, the credit is the SLA\'s credit '
  + 'percentage of the month\'s spend on the models below target, applied once as ledger entry sla-YYYY-MM.';

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
  models: SlaModel[];
  creditNano: number;
}

/** Pure: the month's SLA outcome from the account's usage rows and each model's uptime. */
export function slaOutcome(month: string, sla: NonNullable<AccountBilling['sla']>, usage: readonly UsageRow[],
  uptimeOf: (model: string) => number | null): SlaOutcome {
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
  const target = sla.uptimePercent / 100;
  let creditNano = 0;
  if (share !== null && share < target) {
    const affected = models.filter((m) => m.uptime !== null && m.uptime < target).reduce((a, m) => a + m.spendNano, 0);
    creditNano = Math.floor((affected * sla.creditPercent) / 100);
  }
  return { month, targetPercent: sla.uptimePercent, uptime: share, models, creditNano };
}

export function slaId(month: string): string {
  return `sla-${month}`;
}

/** Applies the outcome's credit once (a second call, anywhere, changes nothing); null when there is nothing to credit. */
export async function applySlaCredit(ledger: BillingLedger, account: string, o: SlaOutcome, at: number): Promise<BillingResult | null> {
  if (o.creditNano <= 0) return null;
  const id = slaId(o.month);
  return ledger.apply({
    account, op: 'credit', eventId: id, objectId: id, paymentIntent: '', amountNano: o.creditNano,
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
export async function runSla(job: SlaJob, account: string, billing: AccountBilling | null, month: string, now: number):
Promise<{ outcome: SlaOutcome; result: BillingResult | null } | null> {
  const r = monthRange(month);
  if (!r || !billing?.sla || now < r.end) return null;
  const data = await job.source.month(account, month);
  const segments = new Map<string, Segment[]>();
  for (const model of new Set(data.usage.map((u) => u.model))) segments.set(model, await job.history.segments(model, r.start));
  const outcome = slaOutcome(month, billing.sla, data.usage, (m) => uptime(segments.get(m) ?? [], r.start, r.end));
  return { outcome, result: await applySlaCredit(job.ledger, account, outcome, r.end - 1) };
}
