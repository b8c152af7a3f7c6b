// The admission decision as a pure function of the current limit state. gateway/state/lua/admit.lua mirrors
// decideAdmission step by step and returns the same verdict; both stores turn a verdict into the client's answer
// with toDecision, so messages and retry-after are identical whichever store runs.
import { nanoToUsd } from '../contract/money.ts';
import type { AdmitDecision, AdmitRequest } from './store.ts';

export interface LimitState {
  revoked: boolean;
  /** Admission times within the last 60 s, oldest first. */
  requestTimes: readonly number[];
  /** Tokens counted within the last 60 s, oldest first. */
  tokenEntries: ReadonlyArray<{ at: number; n: number }>;
  /** Settled spend plus open holds of the key in the current month. */
  keyMonthCommittedNano: number;
  /** Balance less open holds of the account. */
  availableNano: number;
}

export const WINDOW_MS = 60_000;

/** Why a call is refused, in the order the checks run; the Lua script returns the same words. */
export const REFUSALS = ['revoked', 'rpm', 'tpm_size', 'tpm', 'budget', 'balance'] as const;
export type Refusal = (typeof REFUSALS)[number];

export type Verdict = { ok: true } | { ok: false; refusal: Refusal; waitMs: number };

export function decideAdmission(req: AdmitRequest, s: LimitState): Verdict {
  if (s.revoked) return refuse('revoked');
  const { rpm, tpm, monthlyBudgetNano } = req.key;
  if (rpm !== null && s.requestTimes.length >= rpm) {
    const oldest = s.requestTimes[s.requestTimes.length - rpm] ?? req.now;
    return refuse('rpm', oldest + WINDOW_MS - req.now);
  }
  if (tpm !== null) {
    if (req.tokens > tpm) return refuse('tpm_size', WINDOW_MS);
    const used = s.tokenEntries.reduce((sum, e) => sum + e.n, 0);
    if (used + req.tokens > tpm) return refuse('tpm', tokenWait(s.tokenEntries, used + req.tokens - tpm, req.now));
  }
  if (monthlyBudgetNano !== null && s.keyMonthCommittedNano + req.holdNano > monthlyBudgetNano) return refuse('budget');
  if (req.holdNano > s.availableNano) return refuse('balance');
  return { ok: true };
}

/** Time until enough of the oldest entries leave the window to free `excess` tokens. */
function tokenWait(entries: LimitState['tokenEntries'], excess: number, now: number): number {
  let free = excess;
  for (const e of entries) {
    free -= e.n;
    if (free <= 0) return e.at + WINDOW_MS - now;
  }
  return WINDOW_MS;
}

function refuse(refusal: Refusal, waitMs = 0): Verdict {
  return { ok: false, refusal, waitMs };
}

/** The client's answer to a refusal: code, message and retry-after (rate limits only). */
export function toDecision(req: AdmitRequest, refusal: Refusal, waitMs: number): AdmitDecision & { ok: false } {
  const { rpm, tpm, monthlyBudgetNano } = req.key;
  switch (refusal) {
    case 'revoked':
      return { ok: false, code: 'key_revoked', message: 'This API key has been revoked.' };
    case 'rpm':
      return rateLimited(`Rate limit of ${rpm} requests per minute reached.`, waitMs);
    case 'tpm_size':
      return rateLimited(`This request needs up to ${req.tokens} tokens, above the limit of ${tpm} tokens per minute; lower max_tokens.`, waitMs);
    case 'tpm':
      return rateLimited(`Rate limit of ${tpm} tokens per minute reached.`, waitMs);
    case 'budget':
      return { ok: false, code: 'budget_exceeded', message: `This key's monthly budget of ${nanoToUsd(monthlyBudgetNano ?? 0)} USD is reached (the call may cost up to ${nanoToUsd(req.holdNano)} USD).` };
    case 'balance':
      return { ok: false, code: 'insufficient_balance', message: `The account balance is too low for this call (it may cost up to ${nanoToUsd(req.holdNano)} USD); add credit or lower max_tokens.` };
    default: {
      const never: never = refusal;
      throw new Error(`unknown refusal ${String(never)}`);
    }
  }
}

function rateLimited(message: string, waitMs: number): AdmitDecision & { ok: false } {
  return { ok: false, code: 'rate_limited', message, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) };
}
