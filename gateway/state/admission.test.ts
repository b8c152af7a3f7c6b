import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '../contract/snapshot.ts';
import { decideAdmission, toDecision, type LimitState, type Verdict } from './admission.ts';
import { WindowLog } from './window-log.ts';
import type { AdmitRequest } from './store.ts';

const NOW = 1_000_000;
const key: KeyRecord = { hash: 'h', name: 'k', display: 'd', account: 'a', monthlyBudgetNano: 10_000, rpm: 2, tpm: 100, models: null, revoked: false };
const req: AdmitRequest = { eventId: 'e', key, account: { name: 'a', plan: 'p', trialCreditNano: 0, credits: [] }, tokens: 10, holdNano: 1000, now: NOW };
interface Given {
  revoked?: boolean;
  expired?: boolean;
  requestTimes?: number[];
  tokenEntries?: Array<{ at: number; n: number }>;
  keyMonthCommittedNano?: number;
  availableNano?: number;
}

/** A limit state from plain lists: calls (no tokens unless listed as token entries), oldest first. */
function state(g: Given): LimitState {
  const w = new WindowLog();
  for (const at of g.requestTimes ?? []) w.add(at, 0);
  for (const e of g.tokenEntries ?? []) w.add(e.at, e.n);
  return {
    revoked: g.revoked ?? false,
    expired: g.expired ?? false,
    window: w,
    keyMonthCommittedNano: g.keyMonthCommittedNano ?? 0,
    availableNano: g.availableNano ?? 5000,
  };
}

describe('decideAdmission: checks in order, the first refusal wins', () => {
  const cases: Array<[string, Given, Partial<AdmitRequest>, Verdict]> = [
    ['free', {}, {}, { ok: true }],
    ['revoked before everything', { revoked: true, requestTimes: [NOW, NOW], availableNano: 0 }, {}, { ok: false, refusal: 'revoked', waitMs: 0 }],
    ['revoked before expired', { revoked: true, expired: true }, {}, { ok: false, refusal: 'revoked', waitMs: 0 }],
    ['expired before every limit', { expired: true, requestTimes: [NOW, NOW], availableNano: 0 }, {}, { ok: false, refusal: 'expired', waitMs: 0 }],
    ['rpm: wait for the oldest call that keeps it full', { requestTimes: [NOW - 50_000, NOW - 10_000] }, {}, { ok: false, refusal: 'rpm', waitMs: 10_000 }],
    ['a call larger than TPM', {}, { tokens: 101 }, { ok: false, refusal: 'tpm_size', waitMs: 60_000 }],
    [
      'tpm: wait until enough tokens leave',
      {
        tokenEntries: [
          { at: NOW - 59_000, n: 10 },
          { at: NOW - 30_000, n: 70 },
        ],
      },
      { tokens: 40, key: { ...key, rpm: 10 } },
      { ok: false, refusal: 'tpm', waitMs: 30_000 },
    ],
    ['tpm exactly full is fine', { tokenEntries: [{ at: NOW - 1, n: 90 }] }, { tokens: 10 }, { ok: true }],
    ['budget: committed plus hold over it', { keyMonthCommittedNano: 9001 }, {}, { ok: false, refusal: 'budget', waitMs: 0, leftNano: 999 }],
    ['budget exactly reached is fine', { keyMonthCommittedNano: 9000 }, {}, { ok: true }],
    ['balance below the hold', { availableNano: 999 }, {}, { ok: false, refusal: 'balance', waitMs: 0, leftNano: 999 }],
  ];
  it.each(cases)('%s', (_name, given, over, expected) => {
    expect(decideAdmission({ ...req, ...over }, state(given))).toEqual(expected);
  });

  it('rounds retry-after up to whole seconds, at least 1', () => {
    expect(toDecision(req, 'rpm', 1)).toMatchObject({ code: 'rate_limited', retryAfterSec: 1 });
    expect(toDecision(req, 'tpm', 30_001)).toMatchObject({ code: 'rate_limited', retryAfterSec: 31 });
    expect(toDecision(req, 'budget', 0)).not.toHaveProperty('retryAfterSec');
  });

  it('never says to wait longer than the window: a call admitted with a time a moment after this one still leaves within it', () => {
    expect(toDecision(req, 'rpm', 60_000)).toMatchObject({ code: 'rate_limited', retryAfterSec: 60 });
    expect(toDecision(req, 'rpm', 60_004)).toMatchObject({ code: 'rate_limited', retryAfterSec: 60 });
    expect(toDecision(req, 'tpm', 61_500)).toMatchObject({ code: 'rate_limited', retryAfterSec: 60 });
  });

  it("says what is left of the budget or the balance against this call's worst case, and how to make it fit", () => {
    expect(toDecision(req, 'budget', 0, 999)).toEqual({
      ok: false,
      code: 'budget_exceeded',
      message:
        "This call may cost up to 0.000001 USD, more than the 0.000000999 USD left of this key's monthly budget of 0.00001 USD this month; a lower max_tokens (or a shorter input) makes it fit.",
    });
    expect(toDecision(req, 'balance', 0, 999)).toEqual({
      ok: false,
      code: 'insufficient_balance',
      message:
        "This call may cost up to 0.000001 USD, more than the 0.000000999 USD left of the account's balance; a lower max_tokens (or a shorter input) makes it fit, or add credit.",
    });
    // Nothing left: a smaller call would not pass either.
    expect(toDecision(req, 'budget', 0, 0).message).toBe(
      "Nothing is left of this key's monthly budget of 0.00001 USD this month (spent, or held by calls in flight); it starts again on the 1st (UTC).",
    );
    expect(toDecision(req, 'balance', 0, -5).message).toBe("Nothing is left of the account's balance (spent, or held by calls in flight); add credit.");
  });

  it('an expired key is its own code (rotate me), not a revocation', () => {
    expect(toDecision(req, 'expired', 0)).toEqual({ ok: false, code: 'key_expired', message: expect.stringContaining('rotate') });
  });
});

describe('WindowLog: the window the memory store decides on', () => {
  it('keeps the token total through admits, settles and trims, and drops exactly the calls at or before the edge', () => {
    const w = new WindowLog();
    const a = w.add(NOW - 30_000, 10);
    w.add(NOW - 25_000, 5);
    const b = w.add(NOW - 20_000, 20);
    w.setTokens(b, 7);
    expect(w.tokens).toBe(22);
    w.trim(NOW - 25_000);
    expect({ count: w.count, tokens: w.tokens, oldest: w.entry(0) }).toEqual({ count: 1, tokens: 7, oldest: { at: NOW - 20_000, n: 7 } });
    w.setTokens(a, 100); // settled after it left the window: nothing to correct
    expect(w.tokens).toBe(7);
  });

  it('counts a call timed before the last one (a clock step back) from the last time: in the window longer, never less', () => {
    const w = new WindowLog();
    w.add(NOW, 1);
    w.add(NOW - 5_000, 1);
    expect([w.entry(0).at, w.entry(1).at]).toEqual([NOW, NOW]);
    w.trim(NOW - 1);
    expect(w.count).toBe(2);
  });

  it('stays exact over a long run of calls, growing and compacting its columns', () => {
    const w = new WindowLog();
    let expected = 0;
    const live: Array<{ at: number; n: number; seq: number }> = [];
    for (let t = 0; t < 50_000; t++) {
      w.trim(t - 1000 - (t % 3000 < 1500 ? 0 : 500)); // the window's size swings, so the columns grow and compact
      while (live.length > 0 && (live[0] as { at: number }).at <= t - 1000 - (t % 3000 < 1500 ? 0 : 500)) expected -= (live.shift() as { n: number }).n;
      const seq = w.add(t, t % 7);
      live.push({ at: t, n: t % 7, seq });
      expected += t % 7;
      if (t % 5 === 0 && live.length > 10) {
        const e = live[live.length - 10] as { n: number; seq: number };
        w.setTokens(e.seq, e.n + 1);
        expected += 1;
        e.n += 1;
      }
    }
    expect({ count: w.count, tokens: w.tokens }).toEqual({ count: live.length, tokens: expected });
    expect(w.entry(0)).toEqual({ at: (live[0] as { at: number }).at, n: (live[0] as { n: number }).n });
  });
});
