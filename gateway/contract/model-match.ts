// Model access: plan patterns / minTier, then the key's whitelist. Globs: `*` matches any run of characters.
import type { CompiledModel, CompiledPlan, KeyRecord } from './snapshot.ts';

const cache = new Map<string, RegExp>();

export function globMatch(pattern: string, id: string): boolean {
  if (!pattern.includes('*')) return pattern === id;
  let re = cache.get(pattern);
  if (!re) {
    const src = pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    re = new RegExp(`^${src}$`);
    cache.set(pattern, re);
  }
  return re.test(id);
}

export function matchesAny(patterns: readonly string[], id: string): boolean {
  return patterns.some((p) => globMatch(p, id));
}

export function planAllows(plan: CompiledPlan, model: CompiledModel): boolean {
  return plan.models ? matchesAny(plan.models, model.id) : model.minTier <= plan.tier;
}

export function keyAllows(key: KeyRecord, modelId: string): boolean {
  return key.models === null || matchesAny(key.models, modelId);
}
