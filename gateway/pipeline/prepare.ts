// Before admission: the order of the first model's targets and the upstream request for the first of them. A
// request the first target's translator refuses (a field its protocol cannot carry, a body it cannot read) is then
// answered 400 before the call costs an RPM slot, a TPM reservation or a hold. The request is reused by dispatch.
import type { CompiledModel, CompiledTarget } from '../contract/snapshot.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { protocolOf, type Protocol } from '../providers/types.ts';
import { weightedOrder } from '../routing/order.ts';
import type { Translation, UpstreamRequest } from '../translate/types.ts';

export interface FirstAttempt {
  model: CompiledModel;
  /** The model's targets in the order dispatch tries them. */
  order: CompiledTarget[];
  target: CompiledTarget;
  request: UpstreamRequest;
}

/** One translation per upstream protocol per call (a retry on another target of the same protocol reuses it). */
export function translationCache(make: (p: Protocol) => Translation): (p: Protocol) => Translation {
  const cache = new Map<Protocol, Translation>();
  return (p) => {
    let t = cache.get(p);
    if (!t) cache.set(p, (t = make(p)));
    return t;
  };
}

export function prepareFirst(
  model: CompiledModel,
  translationFor: (p: Protocol) => Translation,
  providers: ProviderRegistry,
  random?: () => number,
): FirstAttempt | null {
  const order = weightedOrder(model.targets, random);
  const target = order[0];
  if (!target) return null;
  const request = translationFor(protocolOf(providers.get(target.provider), target)).request(target, model);
  return { model, order, target, request };
}
