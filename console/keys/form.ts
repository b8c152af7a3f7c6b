// The Create key form: parsed and checked here (pure), so every mistake becomes a message next to its field.
import { usdToNano } from '../../gateway/contract/money.ts';
import { newKeyNameError } from './key-name.ts';
import type { KeySpec, PlanLimits } from './key-spec.ts';

export type FieldErrors = Partial<Record<keyof KeySpec, string>>;

export type FormResult = { ok: true; spec: KeySpec } | { ok: false; errors: FieldErrors };

const MODEL = /^[A-Za-z0-9._:/*?-]+$/;

function optionalInt(raw: string, label: string, cap: number | null): { value: number | null; error?: string } {
  const s = raw.trim();
  if (s === '') return { value: null };
  if (!/^\d+$/.test(s) || Number(s) < 1) return { value: null, error: `${label} must be a whole number of at least 1.` };
  const n = Number(s);
  if (cap !== null && n > cap) return { value: null, error: `${label} cannot be above the plan's limit of ${cap}.` };
  return { value: n };
}

const DAY_MS = 86_400_000;
/** Ten years: a longer life is no expiry at all. */
const MAX_DAYS = 3650;

/** "Expires after N days", checked against the account's keyPolicy (the message names the policy). */
function expiryOf(raw: string, plan: PlanLimits, now: number): { value: number | null; error?: string } {
  const s = raw.trim();
  const policy = plan.keyPolicy;
  const max = policy?.maxKeyAgeDays ?? null;
  if (s === '') {
    if (policy?.requireExpiry) {
      return {
        value: null,
        error: `This account's keyPolicy.requireExpiry: enter after how many days the key expires${max === null ? '' : ` (at most ${max})`}.`,
      };
    }
    // The account caps every key's life: the key gets that expiry, shown rather than implied.
    return { value: max === null ? null : now + max * DAY_MS };
  }
  if (!/^\d+$/.test(s) || Number(s) < 1) return { value: null, error: 'Expires after must be a whole number of days, at least 1.' };
  const days = Number(s);
  if (max !== null && days > max) return { value: null, error: `This account's keyPolicy.maxKeyAgeDays allows at most ${max} days.` };
  if (days > MAX_DAYS) return { value: null, error: `Expires after can be at most ${MAX_DAYS} days; leave it empty for a key that never expires.` };
  return { value: Math.floor((now + days * DAY_MS) / 1000) * 1000 };
}

export function parseKeyForm(form: Record<string, string>, plan: PlanLimits, now: number): FormResult {
  const errors: FieldErrors = {};
  const name = (form.name ?? '').trim();
  const nameError = newKeyNameError(name);
  if (nameError !== null) errors.name = nameError;
  let monthlyBudgetNano: number | null = null;
  const budget = (form.monthlyBudgetUsd ?? '').trim();
  if (budget !== '') {
    const usd = Number(budget);
    if (!/^\d+(\.\d{1,9})?$/.test(budget) || !Number.isFinite(usd) || usd <= 0) {
      errors.monthlyBudgetNano = 'Monthly budget must be a positive amount in USD, e.g. 25 or 12.50.';
    } else monthlyBudgetNano = usdToNano(usd);
  }
  const rpm = optionalInt(form.rpm ?? '', 'RPM limit', plan.rpm);
  if (rpm.error) errors.rpm = rpm.error;
  const tpm = optionalInt(form.tpm ?? '', 'TPM limit', plan.tpm);
  if (tpm.error) errors.tpm = tpm.error;
  const models = (form.models ?? '').split(/[\s,]+/).filter((m) => m !== '');
  const bad = models.find((m) => !MODEL.test(m) || m.length > 128);
  if (bad !== undefined) errors.models = `"${bad}" is not a model id or glob (letters, digits, . _ : / - * ?).`;
  const expiry = expiryOf(form.expiresInDays ?? '', plan, now);
  if (expiry.error) errors.expiresAt = expiry.error;
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    spec: { name, monthlyBudgetNano, rpm: rpm.value, tpm: tpm.value, models: models.length > 0 ? models : null, expiresAt: expiry.value },
  };
}
