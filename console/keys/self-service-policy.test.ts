// Self-service caps: the Plan's and Account's merged (the tighter holds), a key's budget and models checked
// against them with messages a person can act on.
import { describe, expect, it } from 'vitest';
import { mergePolicies, NO_POLICY, policyErrors, withinModels } from './self-service-policy.ts';

const USD = 1_000_000_000;

describe('mergePolicies', () => {
  it('takes the lower budget and key count, and keeps every model list', () => {
    expect(mergePolicies(undefined, undefined)).toEqual(NO_POLICY);
    expect(mergePolicies({ maxBudgetNano: 20 * USD, models: ['gpt-*'], maxKeysPerPerson: 3 }, { maxBudgetNano: 5 * USD, models: ['gpt-4o*'] })).toEqual({
      maxBudgetNano: 5 * USD,
      modelLists: [['gpt-*'], ['gpt-4o*']],
      maxKeysPerPerson: 3,
    });
    expect(mergePolicies(undefined, { maxKeysPerPerson: 1 })).toEqual({ ...NO_POLICY, maxKeysPerPerson: 1 });
  });
});

describe('withinModels', () => {
  it.each([
    [['mock-mini'], 'mock-mini', true],
    [['mock-*'], 'mock-mini', true],
    [['mock-*'], 'mock-*', true],
    [['mock-*'], 'mock-mini*', true],
    [['mock-*'], 'other', false],
    [['mock-*'], '*', false],
    [['mock-mini'], 'mock-*', false],
    [['*-mini'], 'mock-*', false],
  ])('%j covers %s: %s', (list, entry, ok) => {
    expect(withinModels(list, entry)).toBe(ok);
  });
});

describe('policyErrors', () => {
  const p = mergePolicies({ maxBudgetNano: 5 * USD, models: ['mock-*'] });

  it('accepts a key within the caps, and anything without caps', () => {
    expect(policyErrors({ monthlyBudgetNano: 5 * USD, models: ['mock-mini'] }, p)).toEqual({});
    expect(policyErrors({ monthlyBudgetNano: null, models: null }, NO_POLICY)).toEqual({});
  });

  it('refuses a missing or larger budget and missing or other models, saying the cap', () => {
    expect(policyErrors({ monthlyBudgetNano: null, models: null }, p)).toEqual({
      monthlyBudgetNano: 'Set a monthly budget of at most 5 USD: the self-service policy of this account requires one.',
      models: 'Name the models of your key, within mock-* (the self-service policy of this account).',
    });
    expect(policyErrors({ monthlyBudgetNano: 5 * USD + 1, models: ['mock-mini', 'gpt-4o', 'o3'] }, p)).toEqual({
      monthlyBudgetNano: 'At most 5 USD a month for a key you make yourself (the self-service policy of this account).',
      models: 'gpt-4o, o3 are not open to keys you make yourself: choose within mock-*.',
    });
  });
});
