// The admission decision as a pure function of the current limit state. gateway/state/lua/admit.lua mirrors
// decideAdmission step by step and returns the same verdict; both stores turn a verdict into the client's answer
// with toDecision, so messages and retry-after are identical whichever store runs.
import { usdWords } from '../contract/money.ts';
import type { AdmitDecision, AdmitRequest } from './store.ts';

/** The calls of a key's last 60 s, oldest first: how many, their tokens in total, and each one (read only to refuse). */
export interface WindowView {
  readonly count: number;
  readonly tokens: number;
  entry(i: number): { at: number; n: number };
}

export interface LimitState {
  revoked: boolean;
  /** At or past the key's expiry, on the store's clock (gateway/contract/key-expiry.ts). */
  expired: boolean;
  /** Calls admitted within the last 60 s and the tokens counted for them. */
  window: WindowView;
  /** Settled spend plus open holds of the key in the current month. */
  keyMonthCommittedNano: number;
  /** Balance less open holds of the account. */
  availableNano: number;
}

export const WINDOW_MS = 60_000;

/** The same words from lookup (authenticate) and admission: the client learns to rotate, not that it was revoked. */
export const KEY_EXPIRED_MESSAGE = 'This API key has expired: rotate it (create a new key) to go on.';

/** Why a call is refused, in the order the checks run; the Lua script returns the same words. */
export const REFUSALS = ['revoked', 'expired', 'rpm', 'tpm_size', 'tpm', 'budget', 'balance'] as const;
export type Refusal = (typeof REFUSALS)[number];

/** A refusal of the budget or the balance carries what is left of it (nano-USD, spent and open holds taken off). */
export type Verdict = { ok: true } | { ok: false; refusal: Refusal; waitMs: number; leftNano?: number };

export function decideAdmission(req: AdmitRequest, s: LimitState): Verdict {
  if (s.revoked) return refuse('revoked');
  if (s.expired) return refuse('expired');
  const { rpm, tpm, monthlyBudgetNano } = req.key;
  const w = s.window;
  if (rpm !== null && w.count >= rpm) {
    const oldest = rpm > 0 ? w.entry(w.count - rpm).at : req.now;
    return refuse('rpm', oldest + WINDOW_MS - req.now);
  }
  if (tpm !== null) {
    if (req.tokens > tpm) return refuse('tpm_size', WINDOW_MS);
    if (w.tokens + req.tokens > tpm) return refuse('tpm', tokenWait(w, w.tokens + req.tokens - tpm, req.now));
  }
  if (monthlyBudgetNano !== null && s.keyMonthCommittedNano + req.holdNano > monthlyBudgetNano)
    return refuse('budget', 0, monthlyBudgetNano - s.keyMonthCommittedNano);
  if (req.holdNano > s.availableNano) return refuse('balance', 0, s.availableNano);
  return { ok: true };
}

/** Time until enough of the oldest entries leave the window to free `excess` tokens. */
function tokenWait(w: WindowView, excess: number, now: number): number {
  let free = excess;
  for (let i = 0; i < w.count; i++) {
    const e = w.entry(i);
    free -= e.n;
    if (free <= 0) return e.at + WINDOW_MS - now;
  }
  return WINDOW_MS;
}

function refuse(refusal: Refusal, waitMs = 0, leftNano?: number): Verdict {
  return leftNano === undefined ? { ok: false, refusal, waitMs } : { ok: false, refusal, waitMs, leftNano };
}

/** How a call whose worst case does not fit can fit: its hold counts the whole input and every token max_tokens allows. */
const MAKE_IT_FIT = 'a lower max_tokens (or a shorter input) makes it fit';

/**
 * The client's answer to a refusal: code, message and retry-after (rate limits only). A budget or balance refusal says
 * what is left (leftNano) against this call's worst case: a key that spent almost nothing is refused when its hold
 * does not fit, and the caller must learn that a smaller call would pass.
 */
export function toDecision(req: AdmitRequest, refusal: Refusal, waitMs: number, leftNano = 0): AdmitDecision & { ok: false } {
  const { rpm, tpm, monthlyBudgetNano } = req.key;
  switch (refusal) {
    case 'revoked':
      return { ok: false, code: 'key_revoked', message: 'This API key has been revoked.' };
    case 'expired':
      return { ok: false, code: 'key_expired', message: KEY_EXPIRED_MESSAGE };
    case 'rpm':
      return rateLimited(`Rate limit of ${rpm} requests per minute reached.`, waitMs);
    case 'tpm_size':
      // Waiting cannot help a call larger than the whole window: a 400, no retry-after (the pipeline refuses it
      // before the store already; this answers the same if a store is asked anyway).
      return {
        ok: false,
        code: 'request_too_large_for_limit',
        message: `This request needs up to ${req.tokens} tokens, ${req.tokens - (tpm ?? 0)} above this key's limit of ${tpm} tokens per minute; lower max_tokens or shorten the input.`,
      };
    case 'tpm':
      return rateLimited(`Rate limit of ${tpm} tokens per minute reached.`, waitMs);
    case 'budget': {
      const budget = `this key's monthly budget of ${usdWords(monthlyBudgetNano ?? 0)} USD`;
      const message =
        leftNano > 0
          ? `This call may cost up to ${usdWords(req.holdNano)} USD, more than the ${usdWords(leftNano)} USD left of ${budget} this month; ${MAKE_IT_FIT}.`
          : `Nothing is left of ${budget} this month (spent, or held by calls in flight); it starts again on the 1st (UTC).`;
      return { ok: false, code: 'budget_exceeded', message };
    }
    case 'balance': {
      const message =
        leftNano > 0
          ? `This call may cost up to ${usdWords(req.holdNano)} USD, more than the ${usdWords(leftNano)} USD left of the account's balance; ${MAKE_IT_FIT}, or add credit.`
          : "Nothing is left of the account's balance (spent, or held by calls in flight); add credit.";
      return { ok: false, code: 'insufficient_balance', message };
    }
    default: {
      const never: never = refusal;
      throw new Error(`unknown refusal ${String(never)}`);
    }
  }
}

/**
 * Every call in a sliding window leaves it within the window's length of now, so the wait is at most that: a longer
 * one comes from a call admitted with a time a little after this one's (taken a moment later, or on another process's
 * clock, but admitted first).
 */
function rateLimited(message: string, waitMs: number): AdmitDecision & { ok: false } {
  return { ok: false, code: 'rate_limited', message, retryAfterSec: Math.min(WINDOW_MS / 1000, Math.max(1, Math.ceil(waitMs / 1000))) };
}
