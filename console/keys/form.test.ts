import { describe, expect, it } from 'vitest';
import { parseKeyForm } from './form.ts';
import { rotatedName } from './rotated-name.ts';

const plan = { rpm: 600, tpm: 200_000 };

describe('parseKeyForm', () => {
  it('accepts a full form', () => {
    const r = parseKeyForm({ name: 'ci-bot', monthlyBudgetUsd: '12.5', rpm: '60', tpm: '', models: 'mock-mini, gpt-4o*' }, plan);
    expect(r).toEqual({ ok: true, spec: { name: 'ci-bot', monthlyBudgetNano: 12_500_000_000, rpm: 60, tpm: null, models: ['mock-mini', 'gpt-4o*'] } });
  });

  it.each([
    [{ name: '' }, 'name', 'Enter a name.'],
    [{ name: '<script>alert(1)</script>' }, 'name', 'lowercase'],
    [{ name: 'a', monthlyBudgetUsd: '-3' }, 'monthlyBudgetNano', 'positive'],
    [{ name: 'a', monthlyBudgetUsd: 'ten' }, 'monthlyBudgetNano', 'positive'],
    [{ name: 'a', rpm: '1.5' }, 'rpm', 'whole number'],
    [{ name: 'a', rpm: '601' }, 'rpm', "plan's limit of 600"],
    [{ name: 'a', tpm: '0' }, 'tpm', 'at least 1'],
    [{ name: 'a', models: 'ok bad"model' }, 'models', 'bad"model'],
  ])('refuses %j with a message on %s', (form, field, text) => {
    const r = parseKeyForm(form as Record<string, string>, plan);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[field as keyof typeof r.errors]).toContain(text);
  });
});

describe('rotatedName', () => {
  it.each([
    ['ci-bot', [], 'ci-bot-2'],
    ['ci-bot', ['ci-bot-2'], 'ci-bot-3'],
    ['ci-bot-2', [], 'ci-bot-3'],
  ])('%s (taken %j) -> %s', (name, taken, out) => {
    expect(rotatedName(name, new Set(taken))).toBe(out);
  });
});
