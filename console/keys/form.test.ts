import { describe, expect, it } from 'vitest';
import { parseKeyForm } from './form.ts';
import { rotatedName } from './rotated-name.ts';

const plan = { rpm: 600, tpm: 200_000, keyPolicy: null };
const NOW = Date.UTC(2026, 10, 25, 10, 0, 0);
const DAY = 86_400_000;

describe('parseKeyForm', () => {
  it('accepts a full form', () => {
    const r = parseKeyForm({ name: 'ci-bot', monthlyBudgetUsd: '12.5', rpm: '60', tpm: '', models: 'mock-mini, gpt-4o*' }, plan, NOW);
    expect(r).toEqual({
      ok: true,
      spec: { name: 'ci-bot', monthlyBudgetNano: 12_500_000_000, rpm: 60, tpm: null, models: ['mock-mini', 'gpt-4o*'], expiresAt: null },
    });
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
    const r = parseKeyForm(form as Record<string, string>, plan, NOW);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[field as keyof typeof r.errors]).toContain(text);
  });

  const strict = { ...plan, keyPolicy: { maxKeyAgeDays: 90, requireExpiry: true } };
  const capped = { ...plan, keyPolicy: { maxKeyAgeDays: 30, requireExpiry: false } };
  it.each([
    ['no expiry, none required', plan, '', null],
    ['30 days', plan, '30', NOW + 30 * DAY],
    ['the policy maximum', strict, '90', NOW + 90 * DAY],
    ['empty under maxKeyAgeDays: the cap becomes the expiry', capped, '', NOW + 30 * DAY],
  ])('expiry: %s', (_name, limits, days, expiresAt) => {
    expect(parseKeyForm({ name: 'k', expiresInDays: days }, limits, NOW)).toMatchObject({ ok: true, spec: { expiresAt } });
  });

  it.each([
    [strict, '', "This account's keyPolicy.requireExpiry: enter after how many days the key expires (at most 90)."],
    [strict, '91', "This account's keyPolicy.maxKeyAgeDays allows at most 90 days."],
    [plan, '0', 'Expires after must be a whole number of days, at least 1.'],
    [plan, '3651', 'Expires after can be at most 3650 days; leave it empty for a key that never expires.'],
  ])('refuses an expiry against %j: %s', (limits, days, message) => {
    expect(parseKeyForm({ name: 'k', expiresInDays: days }, limits, NOW)).toEqual({ ok: false, errors: { expiresAt: message } });
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
