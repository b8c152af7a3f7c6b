// Which remote checks cover a call, by stage. A snapshot without any remote check answers null at once: the hot path
// pays one WeakMap lookup and nothing else.
import type { CompiledGuardrail, CompiledRemoteCheck, Snapshot } from '../../contract/snapshot.ts';
import type { Principal } from '../../pipeline/resolve.ts';
import type { Endpoint } from '../../usage/event.ts';
import { coversCall, guardedEndpoint } from '../policy.ts';

export interface RemoteCheck {
  guardrail: string;
  check: CompiledRemoteCheck;
}

export interface RemoteChecks {
  request: RemoteCheck[];
  response: RemoteCheck[];
}

const withRemote = new WeakMap<Snapshot, CompiledGuardrail[]>();

function remoteGuardrails(snapshot: Snapshot): CompiledGuardrail[] {
  let list = withRemote.get(snapshot);
  if (!list) withRemote.set(snapshot, (list = (snapshot.guardrails ?? []).filter((g) => g.remote && g.remote.length > 0)));
  return list;
}

export function remoteChecksFor(snapshot: Snapshot, p: Principal, endpoint: Endpoint, modelId: string): RemoteChecks | null {
  if (!snapshot.guardrails) return null;
  const gs = remoteGuardrails(snapshot);
  const e = gs.length > 0 ? guardedEndpoint(endpoint) : undefined;
  if (!e) return null;
  const out: RemoteChecks = { request: [], response: [] };
  for (const g of gs) {
    if (!coversCall(g, p, e, modelId)) continue;
    const checks = (g.remote ?? []).map((check) => ({ guardrail: g.name, check }));
    if (g.stages.includes('request')) out.request.push(...checks);
    if (g.stages.includes('response')) out.response.push(...checks);
  }
  return out.request.length > 0 || out.response.length > 0 ? out : null;
}
