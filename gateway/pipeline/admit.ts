// Step 3: one atomic store operation (revoked?, RPM, TPM, monthly budget, balance hold for the worst-case cost). A
// call that can never fit the key's per-minute token budget (its token bound above the whole TPM limit, which the
// plan caps) is refused first, with a 400 that says which limit and by how much: waiting cannot help it, so it gets
// no 429 and no retry-after (a hold above a budget or balance is a 402, which SDKs do not retry). A refusal is
// recorded as a usage event with no cost and thrown as the client's error.
import { GatewayError } from '../errors/catalog.ts';
import type { Hold } from '../state/store.ts';
import { NO_USAGE } from '../translate/types.ts';
import type { GatewayDeps } from './context.ts';
import type { Reservation } from './estimate.ts';
import type { KeyCache } from './key-cache.ts';
import type { CallEvents } from './outcome.ts';
import type { Principal } from './resolve.ts';

export async function admit(deps: GatewayDeps, p: Principal, r: Reservation, events: CallEvents, keys: KeyCache): Promise<Hold> {
  deps.metrics.keySeen?.(p.key);
  const tokens = r.inputTokens + r.outputTokens;
  const never = neverFits(p, r, tokens);
  if (never) return refuse(deps, events, never);
  const decision = await deps.store.admit({ eventId: events.eventId, key: p.key, account: p.account, tokens, holdNano: r.holdNano, now: events.started });
  if (decision.ok) return decision.hold;
  if (decision.code === 'key_revoked' || decision.code === 'key_expired') keys.forget(p.key.hash);
  return refuse(deps, events, new GatewayError(decision.code, decision.message, { retryAfterSec: decision.retryAfterSec }));
}

/** The refusal of a call larger than its key's whole per-minute token budget, or null when it may fit. */
export function neverFits(p: Principal, r: Reservation, tokens: number): GatewayError | null {
  const { tpm } = p.key;
  if (tpm === null || tokens <= tpm) return null;
  return new GatewayError(
    'request_too_large_for_limit',
    `This request needs up to ${tokens} tokens (${r.inputTokens} of input, ${r.outputTokens} of output), ${tokens - tpm} above this key's limit of ${tpm} tokens per minute; lower max_tokens${r.demand.choices > 1 ? ' or n' : ''} or shorten the input.`,
  );
}

async function refuse(deps: GatewayDeps, events: CallEvents, err: GatewayError): Promise<never> {
  const refused = events.of({ status: err.status, errorCode: err.code, route: null, usage: NO_USAGE, ttftMs: null, contacted: false }, 0);
  await deps.store.record(refused);
  deps.metrics.observe(refused);
  throw err;
}
