// The prober: every ModelRoute target probed every spec.probe.intervalSeconds (default SVC_PROBE_INTERVAL_SECONDS,
// else 180; at least 5), the states of targets and models decided from the probes and the live traffic on the board,
// published to the board (every gateway reads them there), kept in the history, and incidents opened and resolved.
// Standalone: the process runs one; cluster: only the operator's leader does. Rounds are spread over the interval
// and probes capped (probe-schedule.ts): 5,000 routes never make 5,000 upstream calls at once.
import { randomUUID } from 'node:crypto';
import type { CompiledModel, Snapshot } from '../contract/snapshot.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { Board } from './board.ts';
import type { History } from './history.ts';
import { newTrack, step, type ModelTrack } from './incidents.ts';
import { probeTarget } from './probe.ts';
import { nextProbeAt, probeOffsetMs, ProbeSlots } from './probe-schedule.ts';
import { DEFAULT_THRESHOLDS, modelState, targetState, type Thresholds } from './states.ts';
import { targetKey, type Incident, type ProbeResult, type State, type TargetStatus } from './types.ts';

export const DEFAULT_INTERVAL_S = 180;
export const MIN_INTERVAL_S = 5;
export const DEFAULT_CONCURRENCY = 32;

export interface MonitorOptions {
  snapshot: () => Snapshot;
  providers: ProviderRegistry;
  board: Board;
  history: History;
  /** Default probe interval (s) for routes that set none. */
  intervalSeconds?: number;
  /** Probes in flight at most (default DEFAULT_CONCURRENCY); the others wait their turn. */
  concurrency?: number;
  thresholds?: Thresholds;
  /** Incidents people declared (Incident objects): open ones stop the automaton for their models; windows mean maintenance. */
  declared?: () => readonly Incident[];
  now?: () => number;
  onError?: (err: unknown) => void;
  /** After each round (the operator writes the ModelRoute's status.targets and Available condition). */
  onRound?: (model: CompiledModel, targets: readonly TargetStatus[], state: State) => Promise<void>;
}

export function intervalFromEnv(env: Record<string, string | undefined>): number {
  const raw = env.SVC_PROBE_INTERVAL_SECONDS;
  if (!raw) return DEFAULT_INTERVAL_S;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < MIN_INTERVAL_S) throw new Error(`SVC_PROBE_INTERVAL_SECONDS must be a whole number of seconds, at least ${MIN_INTERVAL_S}`);
  return n;
}

export function concurrencyFromEnv(env: Record<string, string | undefined>): number {
  const raw = env.SVC_PROBE_CONCURRENCY;
  if (!raw) return DEFAULT_CONCURRENCY;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new Error('SVC_PROBE_CONCURRENCY must be a whole number from 1 to 10000');
  return n;
}

export function inMaintenance(declared: readonly Incident[], model: string, now: number): boolean {
  return declared.some((i) => i.models.includes(model) && i.scheduled !== null && i.scheduled.from <= now && now < i.scheduled.to && i.status !== 'resolved');
}

export class Monitor {
  private readonly recent = new Map<string, ProbeResult[]>();
  private readonly tracks = new Map<string, ModelTrack>();
  private readonly due = new Map<string, number>();
  private readonly running = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;
  private readonly slots: ProbeSlots;
  /** Rounds finished, per model (tests wait on it). */
  readonly rounds = new Map<string, number>();

  private readonly o: MonitorOptions;

  constructor(o: MonitorOptions) {
    this.o = o;
    this.now = o.now ?? Date.now;
    this.slots = new ProbeSlots(o.concurrency ?? DEFAULT_CONCURRENCY);
  }

  intervalOf(m: CompiledModel): number {
    return Math.max(MIN_INTERVAL_S, m.probeIntervalSeconds ?? this.o.intervalSeconds ?? DEFAULT_INTERVAL_S);
  }

  /**
   * Probes every model once at start (through the concurrency cap), then each at its own place in its interval: the
   * rounds of many models spread evenly over the interval instead of all coming due together.
   */
  start(): this {
    this.timer = setInterval(() => this.tick(), 250);
    this.timer.unref();
    this.tick();
    return this;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private tick(): void {
    const now = this.now();
    for (const m of Object.values(this.o.snapshot().models)) {
      if (this.running.has(m.id) || (this.due.get(m.id) ?? 0) > now) continue;
      const intervalMs = this.intervalOf(m) * 1000;
      this.due.set(m.id, nextProbeAt(now, probeOffsetMs(m.id, intervalMs), intervalMs));
      this.running.add(m.id);
      void this.round(m)
        .catch((err: unknown) => this.o.onError?.(err))
        .finally(() => this.running.delete(m.id));
    }
  }

  /** One probe round of a model: its targets probed together, as far as the concurrency cap lets them. */
  async round(m: CompiledModel): Promise<void> {
    const at = this.now();
    const results = await Promise.all(m.targets.map((t) => this.slots.run(() => probeTarget(this.o.providers, m, t, at, this.now))));
    const live = await this.o.board.live(this.now()).catch((err: unknown) => {
      this.o.onError?.(err);
      return new Map();
    });
    const declared = this.o.declared?.() ?? [];
    const maintenance = inMaintenance(declared, m.id, at);
    const statuses: TargetStatus[] = results.map((r) => {
      const k = targetKey(m.id, r.target);
      const log = [...(this.recent.get(k) ?? []), r].slice(-3);
      this.recent.set(k, log);
      const state: State = maintenance
        ? 'under_maintenance'
        : targetState(log, live.get(k) ?? { calls: 0, failures: 0 }, this.o.thresholds ?? DEFAULT_THRESHOLDS);
      return { model: m.id, target: r.target, state, lastProbe: r.at, latencyMs: r.latencyMs, message: r.message };
    });
    const state = modelState(
      statuses.map((s) => s.state),
      maintenance,
    );
    await this.o.board.publish(statuses);
    await this.o.history.addRound({ model: m.id, at, intervalMs: this.intervalOf(m) * 1000, state, probes: results });
    let track = this.tracks.get(m.id);
    if (!track) this.tracks.set(m.id, (track = newTrack()));
    const detail = results
      .filter((r) => !r.ok)
      .map((r) => r.message)
      .join('; ');
    const declaredOpen = declared.some((i) => i.models.includes(m.id) && i.status !== 'resolved' && i.scheduled === null);
    const change = step(track, { model: m.id, state, detail, at, declaredOpen }, randomUUID);
    if (change) await this.o.history.saveIncident(change.incident);
    await this.o.onRound?.(m, statuses, state);
    this.rounds.set(m.id, (this.rounds.get(m.id) ?? 0) + 1);
  }
}
