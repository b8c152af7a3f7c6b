// The usage page's one aggregate: cells (UTC day x group) from one query; rows, the daily series, the cards and
// the CSV are all sums of the same cells, so the totals always equal the sum of the rows.
import type { GuardrailQuery, GuardrailRow } from './guardrails.ts';
export type GroupBy = 'key' | 'task' | 'model' | 'kind';

export const GROUP_LABELS: Record<GroupBy, string> = { key: 'Key', task: 'Task', model: 'Model', kind: 'Kind' };
export const UNTAGGED = '(untagged)';

export interface Figures {
  requests: number;
  errors: number;
  fallbacks: number;
  inputTokens: number;
  /** Output tokens of every kind but rerank, whose output count is search units (below). */
  outputTokens: number;
  searchUnits: number;
  costNano: number;
  /** Calls answered from the response cache, and what they saved against their original calls (nano-USD). */
  cacheHits: number;
  cacheSavedNano: number;
  /**
   * Each kind's own units beside tokens: seconds of audio transcribed, characters spoken, images returned
   * (usage_events.billed_unit).
   */
  audioSeconds: number;
  characters: number;
  images: number;
  /** Batch lines (/v1/batches, Message Batches) and what they cost at the batch price (part of costNano). */
  batchRequests: number;
  batchCostNano: number;
}

export interface Cell extends Figures {
  /** YYYY-MM-DD, UTC. */
  day: string;
  group: string;
}

export interface UsageQuery {
  accounts: string[];
  /** Inclusive UTC days, YYYY-MM-DD. */
  from: string;
  to: string;
  groupBy: GroupBy;
}

export interface UsageSource {
  cells(q: UsageQuery): Promise<Cell[]>;
  /** Guardrail blocks, masks and logs by key and guardrail (guardrails.ts). */
  guardrails(q: GuardrailQuery): Promise<GuardrailRow[]>;
}

export interface UsageReport {
  rows: Array<Figures & { group: string }>;
  days: Array<{ day: string; costNano: number }>;
  totals: Figures;
}

export function zero(): Figures {
  return {
    requests: 0,
    errors: 0,
    fallbacks: 0,
    inputTokens: 0,
    outputTokens: 0,
    searchUnits: 0,
    costNano: 0,
    cacheHits: 0,
    cacheSavedNano: 0,
    audioSeconds: 0,
    characters: 0,
    images: 0,
    batchRequests: 0,
    batchCostNano: 0,
  };
}

export function addTo(f: Figures, c: Figures): void {
  f.requests += c.requests;
  f.errors += c.errors;
  f.fallbacks += c.fallbacks;
  f.inputTokens += c.inputTokens;
  f.outputTokens += c.outputTokens;
  f.searchUnits += c.searchUnits;
  f.costNano += c.costNano;
  f.cacheHits += c.cacheHits;
  f.cacheSavedNano += c.cacheSavedNano;
  f.audioSeconds += c.audioSeconds;
  f.characters += c.characters;
  f.images += c.images;
  f.batchRequests += c.batchRequests;
  f.batchCostNano += c.batchCostNano;
}

/** Every UTC day from `from` to `to`, inclusive (at most 400). */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`) && out.length < 400; t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

export function summarize(cells: Cell[], from: string, to: string): UsageReport {
  const groups = new Map<string, Figures>();
  const perDay = new Map<string, number>();
  const totals = zero();
  for (const c of cells) {
    let g = groups.get(c.group);
    if (!g) groups.set(c.group, (g = zero()));
    addTo(g, c);
    addTo(totals, c);
    perDay.set(c.day, (perDay.get(c.day) ?? 0) + c.costNano);
  }
  const rows = [...groups]
    .map(([group, f]) => ({ group, ...f }))
    .sort((a, b) => b.costNano - a.costNano || b.requests - a.requests || (a.group < b.group ? -1 : 1));
  const days = daysBetween(from, to).map((day) => ({ day, costNano: perDay.get(day) ?? 0 }));
  return { rows, days, totals };
}
