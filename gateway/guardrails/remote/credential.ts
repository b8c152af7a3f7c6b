// A remote check's credential through the identity code of the providers: the check is seen as a target of the
// service's cloud (its name, region, project, credential), so the same chains, caches and back-offs serve it.
import type { CompiledRemoteCheck, CompiledTarget } from '../../contract/snapshot.ts';
import { credentialValue } from '../../providers/types.ts';
import { RemoteFailure } from './types.ts';

const TIMEOUTS = { connectMs: 5_000, firstByteMs: 60_000, idleMs: 60_000, totalMs: 600_000 };

export function asTarget(check: CompiledRemoteCheck, provider: CompiledTarget['provider'], extra: Partial<CompiledTarget> = {}): CompiledTarget {
  return {
    name: `guardrail check ${check.name}`,
    provider,
    baseUrl: null,
    upstreamModel: '',
    credential: check.credential,
    weight: 1,
    timeouts: TIMEOUTS,
    mock: null,
    ...extra,
  };
}

/** A plain token (API key, bearer) from a Secret key or the environment; undefined when the check has none. */
export function credentialValueOf(check: CompiledRemoteCheck): string | undefined {
  const c = check.credential;
  if (c.kind === 'env') {
    const v = credentialValue(asTarget(check, 'openai'));
    if (!v) throw new RemoteFailure('credential', `environment variable ${c.name} is not set`);
    return v;
  }
  if (c.kind === 'bundle') throw new RemoteFailure('credential', 'needs secretKeyRef with a key (or env)');
  return c.kind === 'value' ? c.value : undefined;
}
