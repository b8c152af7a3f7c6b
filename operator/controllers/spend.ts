// Spend in Kubernetes terms (docs/kubernetes.md: Spend in status), as pure functions of what the ledger holds: the
// status fields of an ApiKey and an Account, and which Event a refresh owes. Money stays integer nano-USD until it
// is formatted; the status carries USD strings with cents (what `kubectl get` prints well) and an integer percent.
import { NANO_PER_USD } from '../../gateway/contract/money.ts';

/** Budget levels a key passes in a month; each is told by one Event, once per crossing. */
export type BudgetLevel = 'Warning' | 'Exhausted';
export const WARNING_PERCENT = 80;

const CENT_NANO = NANO_PER_USD / 100;

/** "12.34" (rounded half up to the cent; "-0.50" below zero). */
export function formatUsd(nano: number): string {
  const cents = Math.sign(nano) * Math.round(Math.abs(nano) / CENT_NANO);
  const abs = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * Whole percent of the budget used, rounded down (so 80 means at least 80%); a budget of 0 admits nothing, so it
 * reads 100. Null without a budget.
 */
export function budgetPercent(spentNano: number, budgetNano: number | null): number | null {
  if (budgetNano === null) return null;
  if (budgetNano <= 0) return 100;
  return Math.floor((spentNano * 100) / budgetNano);
}

export function levelOf(percent: number | null): BudgetLevel | null {
  if (percent === null) return null;
  if (percent >= 100) return 'Exhausted';
  return percent >= WARNING_PERCENT ? 'Warning' : null;
}

const RANK: Record<BudgetLevel, number> = { Warning: 1, Exhausted: 2 };

/** What an ApiKey's status records of a refresh; `budgetAlertLevel` belongs to `spendMonth`. */
export interface KeySpendStatus {
  spendMonth: string;
  monthSpendUsd: string;
  budgetUsedPercent: number | null;
  budgetAlertLevel: BudgetLevel | null;
}

export interface KeySpendInput {
  month: string;
  spentNano: number;
  budgetNano: number | null;
  /** What the status holds now (the level it remembers, for the month it names). */
  previous: { spendMonth?: unknown; budgetAlertLevel?: unknown } | undefined;
}

/**
 * The key's new status and the Event it owes: one when the key reaches a higher level than it had this month (80%,
 * then 100%; straight to 100% is one Event). A level that falls (a raised budget, a new month) is forgotten, so the
 * next crossing is told again.
 */
export function keySpend(i: KeySpendInput): { status: KeySpendStatus; event: BudgetLevel | null } {
  const percent = budgetPercent(i.spentNano, i.budgetNano);
  const level = levelOf(percent);
  const prev = i.previous?.spendMonth === i.month ? i.previous.budgetAlertLevel : undefined;
  const had = prev === 'Warning' || prev === 'Exhausted' ? prev : null;
  const event = level !== null && (had === null || RANK[level] > RANK[had]) ? level : null;
  return {
    status: { spendMonth: i.month, monthSpendUsd: formatUsd(i.spentNano), budgetUsedPercent: percent, budgetAlertLevel: level },
    event,
  };
}

export interface AccountSpendStatus {
  spendMonth: string;
  monthSpendUsd: string;
  balanceUsd: string;
  lowBalance: boolean | null;
}

export interface AccountSpendInput {
  month: string;
  creditedNano: number;
  spentNano: number;
  monthNano: number;
  /** spec.lowBalanceThresholdUsd in nano-USD; null: no threshold. */
  thresholdNano: number | null;
  previous: { lowBalance?: unknown } | undefined;
}

/** Balance as the ledger defines it (credited minus spent); LowBalance once each time it drops below the threshold. */
export function accountSpend(i: AccountSpendInput): { status: AccountSpendStatus; lowBalanceEvent: boolean } {
  const balance = i.creditedNano - i.spentNano;
  const low = i.thresholdNano === null ? null : balance < i.thresholdNano;
  return {
    status: { spendMonth: i.month, monthSpendUsd: formatUsd(i.monthNano), balanceUsd: formatUsd(balance), lowBalance: low },
    lowBalanceEvent: low === true && i.previous?.lowBalance !== true,
  };
}

/** The Events' messages: what happened, and what the calls of the key or account now get. */
export function budgetMessage(level: BudgetLevel, percent: number, spentNano: number, budgetNano: number): string {
  const of = `$${formatUsd(spentNano)} of its $${formatUsd(budgetNano)} monthly budget`;
  if (level === 'Warning') {
    return `The key has used ${percent}% (${of}) this month: at 100% its calls are refused with budget_exceeded until the month ends (UTC) or spec.monthlyBudgetUsd is raised.`;
  }
  return budgetNano <= 0
    ? 'The key has a monthly budget of $0.00: every call is refused with budget_exceeded until spec.monthlyBudgetUsd is raised.'
    : `The key has used its whole monthly budget (${of}): its calls are refused with budget_exceeded until the month ends (UTC) or spec.monthlyBudgetUsd is raised.`;
}

export function lowBalanceMessage(balanceNano: number, thresholdNano: number): string {
  return `The balance is $${formatUsd(balanceNano)}, below the threshold of $${formatUsd(thresholdNano)} (spec.lowBalanceThresholdUsd): add a credit before it runs out, or calls of every key of the account are refused with insufficient_balance.`;
}
