// Step 3: one atomic store operation (revoked?, RPM, TPM, monthly budget, balance hold for the worst-case cost). A
// refusal is recorded as a usage event with no cost and thrown as the client's error.
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
  const decision = await deps.store.admit({
    eventId: events.eventId,
    key: p.key,
    account: p.account,
    tokens: r.inputBytes + r.outputTokens,
    holdNano: r.holdNano,
    now: events.started,
  });
  if (decision.ok) return decision.hold;
  if (decision.code === 'key_revoked') keys.forget(p.key.hash);
  const err = new GatewayError(decision.code, decision.message, { retryAfterSec: decision.retryAfterSec });
  const refused = events.of({ status: err.status, errorCode: err.code, route: null, usage: NO_USAGE, ttftMs: null, contacted: false }, 0);
  await deps.store.record(refused);
  deps.metrics.observe(refused);
  throw err;
}
