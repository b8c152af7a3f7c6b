// The admission decision as a pure function of the current limit state (the Redis Lua script mirrors it).
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

const WINDOW_MS = 60_000;

export function decideAdmission(req: AdmitRequest, s: LimitState): AdmitDecision | { ok: true } {
  if (s.revoked) return { ok: false, code: 'key_revoked', message: 'This API key has been revoked.' };
  const { rpm, tpm, monthlyBudgetNano } = req.key;
  if (rpm !== null && s.requestTimes.length >= rpm) {
    const oldest = s.requestTimes[s.requestTimes.length - rpm] ?? req.now;
    return rateLimited(`Rate limit of ${rpm} requests per minute reached.`, oldest + WINDOW_MS - req.now);
  }
  if (tpm !== null) {
    if (req.tokens > tpm) {
      return { ok: false, code: 'rate_limited', message: `This request needs up to ${req.tokens} tokens, above the limit of ${tpm} tokens per minute; lower max_tokens.`, retryAfterSec: 60 };
    }
    const used = s.tokenEntries.reduce((sum, e) => sum + e.n, 0);
    if (used + req.tokens > tpm) {
      let free = used + req.tokens - tpm;
      let wait = WINDOW_MS;
      for (const e of s.tokenEntries) {
        free -= e.n;
        if (free <= 0) {
          wait = e.at + WINDOW_MS - req.now;
          break;
        }
      }
      return rateLimited(`Rate limit of ${tpm} tokens per minute reached.`, wait);
    }
  }
  if (monthlyBudgetNano !== null && s.keyMonthCommittedNano + req.holdNano > monthlyBudgetNano) {
    return { ok: false, code: 'budget_exceeded', message: `This key's monthly budget of ${nanoToUsd(monthlyBudgetNano)} USD is reached (the call may cost up to ${nanoToUsd(req.holdNano)} USD).` };
  }
  if (req.holdNano > s.availableNano) {
    return { ok: false, code: 'insufficient_balance', message: `The account balance is too low for this call (it may cost up to ${nanoToUsd(req.holdNano)} USD); add credit or lower max_tokens.` };
  }
  return { ok: true };
}

function rateLimited(message: string, waitMs: number): AdmitDecision {
  return { ok: false, code: 'rate_limited', message, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) };
}
