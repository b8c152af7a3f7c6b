// Which targets to try, in which order: a weighted shuffle (the first pick follows the weights, and so does
// each next one among the rest); weight-0 targets are kept as last resorts in listed order.
import type { CompiledTarget } from '../contract/snapshot.ts';

export function weightedOrder<T extends Pick<CompiledTarget, 'weight'>>(targets: readonly T[], random: () => number = Math.random): T[] {
  // One target (the usual route) needs no draw.
  if (targets.length === 1 && (targets[0] as T).weight > 0) return targets as T[];
  const pool = targets.filter((t) => t.weight > 0);
  const out: T[] = [];
  while (pool.length > 0) {
    const total = pool.reduce((s, t) => s + t.weight, 0);
    let r = random() * total;
    let i = 0;
    for (; i < pool.length - 1; i++) {
      r -= (pool[i] as T).weight;
      if (r < 0) break;
    }
    out.push(...pool.splice(i, 1));
  }
  return out.concat(targets.filter((t) => t.weight <= 0));
}
