// The remote guard of one call, or null when no remote check covers it. Its facts join the local guard's (one list
// on the usage event, counted once on the metrics); without a local guard it keeps its own.
import type { Snapshot } from '../../contract/snapshot.ts';
import type { CallSpec } from '../../pipeline/call-spec.ts';
import type { GatewayDeps } from '../../pipeline/context.ts';
import type { Principal } from '../../pipeline/resolve.ts';
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
