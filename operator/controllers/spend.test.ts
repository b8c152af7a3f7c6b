// Spend in status as pure functions: cents, percents, and which Event a refresh owes (once per crossing per month).
import { describe, expect, it } from 'vitest';
import { accountSpend, budgetMessage, budgetPercent, formatUsd, keySpend, lowBalanceMessage, type KeySpendInput } from './spend.ts';

const USD = 1_000_000_000;

describe('formatUsd', () => {
  it.each([
    [0, '0.00'],
    [12_340_000_000, '12.34'],
    [4_999_999, '0.00'],
    [5_000_000, '0.01'],
    [1 * USD + 994_999_999, '1.99'],
    [1 * USD + 995_000_000, '2.00'],
    [-500_000_000, '-0.50'],
    [123_456 * USD, '123456.00'],
  ])('%d nano-USD -> %s', (nano, s) => expect(formatUsd(nano)).toBe(s));
});

describe('budgetPercent', () => {
  it.each([
    [0, null, null],
    [5 * USD, null, null],
    [0, 10 * USD, 0],
    [7_999_999_999, 10 * USD, 79],
    [8 * USD, 10 * USD, 80],
    [10 * USD, 10 * USD, 100],
    [0, 0, 100],
  ])('spent %d of budget %s -> %s', (spent, budget, percent) => expect(budgetPercent(spent, budget)).toBe(percent));
});

describe('keySpend', () => {
  const month = '2026-11';
  const run = (spent: number, budget: number | null, previous?: KeySpendInput['previous']) =>
    keySpend({ month, spentNano: spent, budgetNano: budget, previous });

  it('owes no Event without a budget, and shows no percent', () => {
    expect(run(50 * USD, null)).toEqual({
      status: { spendMonth: month, monthSpendUsd: '50.00', budgetUsedPercent: null, budgetAlertLevel: null },
      event: null,
    });
  });

  it('owes Warning at exactly 80%, once; Exhausted at exactly 100%, once', () => {
    expect(run(7_999_999_999, 10 * USD).event).toBeNull();
    const warn = run(8 * USD, 10 * USD);
    expect(warn.event).toBe('Warning');
    expect(run(9 * USD, 10 * USD, warn.status).event).toBeNull();
    const done = run(10 * USD, 10 * USD, warn.status);
    expect(done.event).toBe('Exhausted');
    expect(run(10 * USD, 10 * USD, done.status).event).toBeNull();
  });

  it('tells a jump straight to 100% by one Event', () => {
    expect(run(10 * USD, 10 * USD).event).toBe('Exhausted');
  });

  it('counts a budget of 0 as exhausted', () => {
    expect(run(0, 0)).toMatchObject({ status: { budgetUsedPercent: 100, budgetAlertLevel: 'Exhausted' }, event: 'Exhausted' });
  });

  it('tells the crossing again in a new month, and after a raised budget let the level fall', () => {
    expect(run(8 * USD, 10 * USD, { spendMonth: '2026-10', budgetAlertLevel: 'Exhausted' }).event).toBe('Warning');
    const raised = run(8 * USD, 100 * USD, { spendMonth: month, budgetAlertLevel: 'Warning' });
    expect(raised).toMatchObject({ status: { budgetAlertLevel: null }, event: null });
    expect(run(80 * USD, 100 * USD, raised.status).event).toBe('Warning');
  });
});

describe('accountSpend', () => {
  const base = { month: '2026-11', creditedNano: 10 * USD, spentNano: 4 * USD, monthNano: 3 * USD, previous: undefined };

  it('shows the balance as credits minus spend, and no low-balance flag without a threshold', () => {
    expect(accountSpend({ ...base, thresholdNano: null })).toEqual({
      status: { spendMonth: '2026-11', monthSpendUsd: '3.00', balanceUsd: '6.00', lowBalance: null },
      lowBalanceEvent: false,
    });
  });

  it('owes LowBalance once when the balance drops below the threshold, and again after a top-up lifted it', () => {
    const first = accountSpend({ ...base, thresholdNano: 7 * USD });
    expect(first).toMatchObject({ status: { lowBalance: true }, lowBalanceEvent: true });
    expect(accountSpend({ ...base, spentNano: 5 * USD, thresholdNano: 7 * USD, previous: first.status }).lowBalanceEvent).toBe(false);
    const topped = accountSpend({ ...base, creditedNano: 20 * USD, thresholdNano: 7 * USD, previous: first.status });
    expect(topped).toMatchObject({ status: { lowBalance: false }, lowBalanceEvent: false });
    expect(accountSpend({ ...base, spentNano: 14 * USD, creditedNano: 20 * USD, thresholdNano: 7 * USD, previous: topped.status }).lowBalanceEvent).toBe(true);
    // Exactly at the threshold is not below it.
    expect(accountSpend({ ...base, thresholdNano: 6 * USD }).status.lowBalance).toBe(false);
  });
});

describe('messages', () => {
  it('say what happened and what the calls get', () => {
    expect(budgetMessage('Warning', 80, 8 * USD, 10 * USD)).toBe(
      'The key has used 80% ($8.00 of its $10.00 monthly budget) this month: at 100% its calls are refused with budget_exceeded until the month ends (UTC) or spec.monthlyBudgetUsd is raised.',
    );
    expect(budgetMessage('Exhausted', 100, 10 * USD, 10 * USD)).toContain('used its whole monthly budget ($10.00 of its $10.00 monthly budget)');
    expect(budgetMessage('Exhausted', 100, 0, 0)).toContain('a monthly budget of $0.00');
    expect(lowBalanceMessage(4_500_000_000, 5 * USD)).toContain('The balance is $4.50, below the threshold of $5.00');
  });
});
