// Step 3: one atomic store operation (revoked?, RPM, TPM, monthly budget, balance hold for the worst-case cost). A
// call that can never fit the key's limits (its token bound above the whole per-minute budget, its worst-case cost
// above the whole monthly budget) is refused first, with a 400 that says which limit and by how much: waiting cannot
// help it, so it gets no 429 and no retry-after. A refusal is recorded as a usage event with no cost and thrown as
// the client's error.
import { nanoToUsd } from '../contract/money.ts';
import { GatewayError } from '../errors/catalog.ts';
import type { Hold } from '../state/store.ts';
import { NO_USAGE } from '../translate/types.ts';
import type { GatewayDeps } from './context.ts';
import type { Reservation } from './estimate.ts';
import type { KeyCache } from './key-cache.ts';
import type { CallEvents } from './outcome.ts';
import type { Principal } from './resolve.ts';

export async function admit(deps: GatewayDeps, p: Principal, r: Reservation, events: CallEvents, keys: KeyCache): Promise<Hold> {
  const tokens = r.inputTokens + r.outputTokens;
  const never = neverFits(p, r, tokens);
  if (never) return refuse(deps, events, never);
  const decision = await deps.store.admit({ eventId: events.eventId, key: p.key, account: p.account, tokens, holdNano: r.holdNano, now: events.started });
  if (decision.ok) return decision.hold;
  if (decision.code === 'key_revoked') keys.forget(p.key.hash);
  return refuse(deps, events, new GatewayError(decision.code, decision.message, { retryAfterSec: decision.retryAfterSec }));
}

/** The refusal of a call larger than a limit of its key as a whole, or null when it may fit. */
export function neverFits(p: Principal, r: Reservation, tokens: number): GatewayError | null {
  const { tpm, monthlyBudgetNano } = p.key;
  if (tpm !== null && tokens > tpm) {
    return new GatewayError(
      'request_too_large_for_limit',
      `This request needs up to ${tokens} tokens (${r.inputTokens} of input, ${r.outputTokens} of output), ${tokens - tpm} above this key's limit of ${tpm} tokens per minute; lower max_tokens${r.demand.choices > 1 ? ' or n' : ''} or shorten the input.`,
      { param: r.demand.maxTokens === undefined ? undefined : 'max_tokens' },
    );
  }
  if (monthlyBudgetNano !== null && r.holdNano > monthlyBudgetNano) {
    return new GatewayError(
      'request_too_large_for_limit',
      `This request may cost up to ${nanoToUsd(r.holdNano)} USD, ${nanoToUsd(r.holdNano - monthlyBudgetNano)} USD above this key's whole monthly budget of ${nanoToUsd(monthlyBudgetNano)} USD; lower max_tokens${r.demand.choices > 1 ? ' or n' : ''} or shorten the input.`,
    );
  }
  return null;
}

async function refuse(deps: GatewayDeps, events: CallEvents, err: GatewayError): Promise<never> {
  const refused = events.of({ status: err.status, errorCode: err.code, route: null, usage: NO_USAGE, ttftMs: null, contacted: false }, 0);
  await deps.store.record(refused);
  deps.metrics.observe(refused);
  throw err;
}
