import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '../contract/snapshot.ts';
import { decideAdmission, toDecision, type LimitState, type Verdict } from './admission.ts';
import type { AdmitRequest } from './store.ts';

const NOW = 1_000_000;
const key: KeyRecord = { hash: 'h', name: 'k', display: 'd', account: 'a', monthlyBudgetNano: 10_000, rpm: 2, tpm: 100, models: null, revoked: false };
const req: AdmitRequest = { eventId: 'e', key, account: { name: 'a', plan: 'p', trialCreditNano: 0, credits: [] }, tokens: 10, holdNano: 1000, now: NOW };
const free: LimitState = { revoked: false, requestTimes: [], tokenEntries: [], keyMonthCommittedNano: 0, availableNano: 5000 };

describe('decideAdmission: checks in order, the first refusal wins', () => {
  const cases: Array<[string, Partial<LimitState>, Partial<AdmitRequest>, Verdict]> = [
    ['free', {}, {}, { ok: true }],
    ['revoked before everything', { revoked: true, requestTimes: [NOW, NOW], availableNano: 0 }, {}, { ok: false, refusal: 'revoked', waitMs: 0 }],
    ['rpm: wait for the oldest call that keeps it full', { requestTimes: [NOW - 50_000, NOW - 10_000] }, {}, { ok: false, refusal: 'rpm', waitMs: 10_000 }],
    ['a call larger than TPM', {}, { tokens: 101 }, { ok: false, refusal: 'tpm_size', waitMs: 60_000 }],
    ['tpm: wait until enough tokens leave', { tokenEntries: [{ at: NOW - 59_000, n: 10 }, { at: NOW - 30_000, n: 70 }] }, { tokens: 40 }, { ok: false, refusal: 'tpm', waitMs: 30_000 }],
    ['tpm exactly full is fine', { tokenEntries: [{ at: NOW - 1, n: 90 }] }, { tokens: 10 }, { ok: true }],
    ['budget: committed plus hold over it', { keyMonthCommittedNano: 9001 }, {}, { ok: false, refusal: 'budget', waitMs: 0 }],
    ['budget exactly reached is fine', { keyMonthCommittedNano: 9000 }, {}, { ok: true }],
    ['balance below the hold', { availableNano: 999 }, {}, { ok: false, refusal: 'balance', waitMs: 0 }],
  ];
  it.each(cases)('%s', (_name, state, over, expected) => {
    expect(decideAdmission({ ...req, ...over }, { ...free, ...state })).toEqual(expected);
  });

  it('rounds retry-after up to whole seconds, at least 1', () => {
    expect(toDecision(req, 'rpm', 1)).toMatchObject({ code: 'rate_limited', retryAfterSec: 1 });
    expect(toDecision(req, 'tpm', 30_001)).toMatchObject({ code: 'rate_limited', retryAfterSec: 31 });
    expect(toDecision(req, 'budget', 0)).not.toHaveProperty('retryAfterSec');
  });
});
