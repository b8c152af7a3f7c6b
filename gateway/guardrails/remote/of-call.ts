// The remote guard of one call, or null when no remote check covers it. Its facts join the local guard's (one list
// on the usage event, counted once on the metrics); without a local guard it keeps its own.
import type { Snapshot } from '../../contract/snapshot.ts';
import { GatewayError } from '../../errors/catalog.ts';
import type { CallSpec } from '../../pipeline/call-spec.ts';
import type { GatewayDeps } from '../../pipeline/context.ts';
import { callEvents, type EventSpec } from '../../pipeline/outcome.ts';
import type { Principal } from '../../pipeline/resolve.ts';
import { NO_USAGE } from '../../translate/types.ts';
import type { GuardFact } from '../apply.ts';
import type { CallGuard } from '../call-guard.ts';
import { remoteChecksFor } from './policy.ts';
import { RemoteGuard } from './remote-guard.ts';

export function remoteGuardOf(
  deps: GatewayDeps,
  call: { snapshot: Snapshot; p: Principal; spec: CallSpec; client: AbortSignal; guard: CallGuard | null },
): { guard: RemoteGuard; facts: GuardFact[] } | null {
  const { snapshot, p, spec, client, guard } = call;
  const checks = remoteChecksFor(snapshot, p, spec.endpoint, spec.modelId);
  if (!checks) return null;
  const facts: GuardFact[] = guard ? guard.facts : [];
  const record = guard
    ? (fs: readonly GuardFact[]) => guard.record(fs)
    : (fs: readonly GuardFact[]) => {
        for (const f of fs) {
          facts.push({ ...f });
          deps.metrics.guardrail?.(f);
        }
      };
  const meta = { endpoint: spec.endpoint, dialect: spec.dialect, model: spec.modelId, account: p.account.name, apiKey: p.key.name };
  return { guard: new RemoteGuard({ checks, meta, endpoint: spec.endpoint, dialect: spec.dialect, signal: client, record }), facts };
}

/**
 * The request stage of the remote checks, with the record of a block as for the local ones (request-block.ts): the
 * call is refused before admission (cost 0, no slot, no hold) and leaves one usage event, 400 content_blocked, with
 * the facts.
 */
export async function remoteRequest(
  deps: GatewayDeps,
  remote: { guard: RemoteGuard; facts: GuardFact[] },
  call: { spec: EventSpec; p: Principal; started: number },
  body: Record<string, unknown>,
): Promise<number> {
  try {
    return await remote.guard.request(body);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'content_blocked') {
      const outcome = { status: err.status, errorCode: err.code, route: null, usage: NO_USAGE, ttftMs: null, contacted: false };
      const e = callEvents(call.spec, call.p, call.started, deps.now, remote.facts).of(outcome, 0);
      deps.metrics.observe(e);
      await deps.store.record(e);
    }
    throw err;
  }
}
