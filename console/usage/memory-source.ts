// Usage from events held in the process (standalone without Postgres): folded into the same cells as the rollup.
import type { UsageEvent } from '../../gateway/usage/event.ts';
import { isSearchUnits, KIND_LABELS, kindOf } from '../../gateway/usage/kind.ts';
import { guardrailRows, type GuardrailQuery, type GuardrailRow } from './guardrails.ts';
import { addTo, UNTAGGED, zero, type Cell, type GroupBy, type UsageQuery, type UsageSource } from './report.ts';

export function groupOf(e: UsageEvent, by: GroupBy): string {
  switch (by) {
    case 'key':
      return e.apiKey;
    case 'task':
      return e.taskType || UNTAGGED;
    case 'model':
      return e.servedModel || e.requestedModel;
    case 'kind':
      return KIND_LABELS[kindOf(e.endpoint)];
    default: {
      const never: never = by;
      return never;
    }
  }
}

export function cellsOf(events: Iterable<UsageEvent>, q: UsageQuery): Cell[] {
  const accounts = new Set(q.accounts);
  const cells = new Map<string, Cell>();
  for (const e of events) {
    const day = e.createdAt.slice(0, 10);
    if (!accounts.has(e.account) || day < q.from || day > q.to) continue;
    const group = groupOf(e, q.groupBy);
    const id = `${day}\u0000${group}`;
    let c = cells.get(id);
    if (!c) cells.set(id, (c = { day, group, ...zero() }));
    const units = isSearchUnits(kindOf(e.endpoint));
    addTo(c, {
      requests: 1,
      errors: e.status >= 400 ? 1 : 0,
      fallbacks: e.fallback ? 1 : 0,
      inputTokens: e.inputTokens,
      outputTokens: units ? 0 : e.outputTokens,
      searchUnits: units ? e.outputTokens : 0,
      costNano: e.costNano,
      cacheHits: e.cache === 'hit' ? 1 : 0,
      cacheSavedNano: e.cacheSavedNano ?? 0,
      audioSeconds: e.unit === 'seconds' ? (e.units ?? 0) : 0,
      characters: e.unit === 'characters' ? (e.units ?? 0) : 0,
      images: e.unit === 'images' ? (e.units ?? 0) : 0,
      batchRequests: e.batch ? 1 : 0,
      batchCostNano: e.batch ? e.costNano : 0,
    });
  }
  return [...cells.values()];
}

export class MemoryUsageSource implements UsageSource {
  private readonly events: (accounts: string[]) => Promise<Iterable<UsageEvent>>;

  constructor(events: (accounts: string[]) => Promise<Iterable<UsageEvent>>) {
    this.events = events;
  }

  async cells(q: UsageQuery): Promise<Cell[]> {
    return cellsOf(await this.events(q.accounts), q);
  }

  async guardrails(q: GuardrailQuery): Promise<GuardrailRow[]> {
    return guardrailRows(await this.events(q.accounts), q);
  }
}
