// The request stage of a call's guardrails, with the record of a block: a blocked request is refused before
// admission (it costs nothing, takes no RPM or TPM slot, holds nothing) but leaves one usage event, cost 0, status
// 400 content_blocked with the guardrail facts, so the usage page and Postgres count blocks by key and guardrail
// like the masks and logs of the calls that passed.
import { GatewayError } from '../errors/catalog.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { callEvents, type EventSpec } from '../pipeline/outcome.ts';
import type { Principal } from '../pipeline/resolve.ts';
import { NO_USAGE } from '../translate/types.ts';
import type { CallGuard } from './call-guard.ts';

/** Checks and masks the body (CallGuard.request); a block is recorded, then thrown as the caller's 400. */
export async function guardRequest(
  deps: GatewayDeps,
  guard: CallGuard,
  call: { spec: EventSpec; p: Principal; started: number },
  body: Record<string, unknown>,
): Promise<number> {
  try {
    return guard.request(body);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'content_blocked') {
      const outcome = { status: err.status, errorCode: err.code, route: null, usage: NO_USAGE, ttftMs: null, contacted: false };
      const e = callEvents(call.spec, call.p, call.started, deps.now, guard.facts).of(outcome, 0);
      deps.metrics.observe(e);
      await deps.store.record(e);
    }
    throw err;
  }
}
