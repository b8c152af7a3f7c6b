// What the status page reads back: each model's history as segments (gateway/availability/uptime.ts), the probes,
// and incidents with their updates. In memory here (standalone without DATABASE_URL); Postgres keeps the same in
// probe_results, incidents and incident_updates.
import { appendSegment, DAY_MS, type Segment } from './uptime.ts';
import type { Incident, ProbeResult, State } from './types.ts';

export interface Round {
  model: string;
  at: number;
  intervalMs: number;
  state: State;
  probes: ProbeResult[];
}

export interface History {
  addRound(r: Round): Promise<void>;
  /** The model's segments that end after `since`. */
  segments(model: string, since: number): Promise<Segment[]>;
  saveIncident(i: Incident): Promise<void>;
  /** Incidents open, or created or resolved after `since`; newest first. */
  incidents(since: number): Promise<Incident[]>;
  close(): Promise<void>;
}

const KEEP_MS = 90 * DAY_MS;

export class MemoryHistory implements History {
  private readonly byModel = new Map<string, Segment[]>();
  private readonly byId = new Map<string, Incident>();
  /** The latest probes (a bounded log, for tests and the platform's probe cost). */
  readonly probes: ProbeResult[] = [];

  async addRound(r: Round): Promise<void> {
    let s = this.byModel.get(r.model);
    if (!s) this.byModel.set(r.model, (s = []));
    appendSegment(s, { from: r.at, to: r.at + r.intervalMs, state: r.state });
    while (s.length > 1 && (s[0] as Segment).to < r.at - KEEP_MS) s.shift();
    this.probes.push(...r.probes);
    if (this.probes.length > 20_000) this.probes.splice(0, this.probes.length - 10_000);
  }

  async segments(model: string, since: number): Promise<Segment[]> {
    return (this.byModel.get(model) ?? []).filter((s) => s.to > since).map((s) => ({ ...s }));
  }

  async saveIncident(i: Incident): Promise<void> {
    this.byId.set(i.id, structuredClone(i));
  }

  async incidents(since: number): Promise<Incident[]> {
    return [...this.byId.values()]
      .filter((i) => i.resolvedAt === null || i.updatedAt >= since)
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((i) => structuredClone(i));
  }

  async close(): Promise<void> {}
}

/** Writes to every history, reads from the first (the operator: Redis for the consoles, Postgres as the record). */
export class TeeHistory implements History {
  private readonly all: readonly History[];

  constructor(first: History, ...rest: History[]) {
    this.all = [first, ...rest];
  }

  private get first(): History {
    return this.all[0] as History;
  }

  async addRound(r: Round): Promise<void> {
    await Promise.all(this.all.map((h) => h.addRound(r)));
  }

  segments(model: string, since: number): Promise<Segment[]> {
    return this.first.segments(model, since);
  }

  async saveIncident(i: Incident): Promise<void> {
    await Promise.all(this.all.map((h) => h.saveIncident(i)));
  }

  incidents(since: number): Promise<Incident[]> {
    return this.first.incidents(since);
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((h) => h.close()));
  }
}
