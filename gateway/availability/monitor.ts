// The prober: every ModelRoute target probed every spec.probe.intervalSeconds (default SVC_PROBE_INTERVAL_SECONDS,
// else 180; at least 5), the states of targets and models decided from the probes and the live traffic on the board,
// published to the board (every gateway reads them there), kept in the history, and incidents opened and resolved.
// Standalone: the process runs one (several on one Redis: only the holder of the prober lease probes,
// prober-lease.ts); cluster: only the operator's leader does. Rounds are spread over the interval, the first ones over
// a start window that grows with the number of routes, and probes capped (probe-schedule.ts): 5,000 routes never make
// 5,000 upstream calls at once. Every McpServer is
// probed the same way (mcp-probe.ts: initialize and ping) as the subject `mcp:<name>` with one target, its name,
// on the default interval and through the same cap.
import { randomUUID } from 'node:crypto';
import type { CompiledMcpServer, CompiledModel, Snapshot } from '../contract/snapshot.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { Board } from './board.ts';
import type { History } from './history.ts';
import { newTrack, step, type ModelTrack } from './incidents.ts';
import { probeMcpServer } from './mcp-probe.ts';
import { probeTarget } from './probe.ts';
import { nextProbeAt, probeOffsetMs, ProbeSlots } from './probe-schedule.ts';
import { DEFAULT_THRESHOLDS, modelState, targetState, type Thresholds } from './states.ts';
import { mcpSubject, targetKey, type Incident, type ProbeResult, type State, type TargetStatus } from './types.ts';

export const DEFAULT_INTERVAL_S = 180;
export const MIN_INTERVAL_S = 5;
export const DEFAULT_CONCURRENCY = 32;
/** The first rounds after start are spread over (routes x this), at most an interval: 5,000 routes over 100 s. */
export const START_GAP_MS = 20;

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
  /**
   * Whether this process probes now (several standalone processes on one Redis: the holder of the prober lease).
   * While it returns false the monitor keeps each model's place in its interval without probing, so a process that
   * takes over probes on the same rhythm, with no burst. Absent: always.
   */
  leading?: () => boolean;
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
  /** Probes in flight at most: up to this many subjects are probed together at start. */
  private readonly cap: number;
  /** Rounds finished, per model (tests wait on it). */
  readonly rounds = new Map<string, number>();

  private readonly o: MonitorOptions;

  constructor(o: MonitorOptions) {
    this.o = o;
    this.now = o.now ?? Date.now;
    this.cap = o.concurrency ?? DEFAULT_CONCURRENCY;
    this.slots = new ProbeSlots(this.cap);
  }

  intervalOf(m: CompiledModel): number {
    return Math.max(MIN_INTERVAL_S, m.probeIntervalSeconds ?? this.o.intervalSeconds ?? DEFAULT_INTERVAL_S);
  }

  /**
   * Probes every model once soon after start (all at once when they fit the concurrency cap; else each at its place in
   * a start window of START_GAP_MS per subject, at most an interval: 5,000 routes over 100 s), then each at its own
   * place in its interval: the rounds of many models spread evenly instead of all coming due together, and through
   * the concurrency cap.
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

  /** The probe interval of McpServers (s): the default one (an McpServer sets none of its own). */
  mcpInterval(): number {
    return Math.max(MIN_INTERVAL_S, this.o.intervalSeconds ?? DEFAULT_INTERVAL_S);
  }

  private tick(): void {
    const now = this.now();
    const snap = this.o.snapshot();
    const subjects: Array<[string, number, () => Promise<void>]> = [
      // Image and audio models are not probed: the smallest probe would make, and pay for, an image or audio.
      ...Object.values(snap.models)
        .filter((m) => m.type !== 'image' && m.type !== 'transcription' && m.type !== 'speech')
        .map((m): [string, number, () => Promise<void>] => [m.id, this.intervalOf(m), () => this.round(m)]),
      ...Object.values(snap.mcpServers ?? {}).map((s): [string, number, () => Promise<void>] => [
        mcpSubject(s.name),
        this.mcpInterval(),
        () => this.roundMcp(s),
      ]),
    ];
    const leading = this.o.leading?.() ?? true;
    for (const [id, intervalS, round] of subjects) {
      const intervalMs = intervalS * 1000;
      let due = this.due.get(id);
      if (due === undefined) {
        // As many subjects as the cap lets run at once are all probed at start; more are spread over the window.
        const window = subjects.length > this.cap ? Math.min(intervalMs, subjects.length * START_GAP_MS) : 0;
        due = now + (window > 0 ? probeOffsetMs(id, window) : 0);
        this.due.set(id, due);
      }
      if (this.running.has(id) || due > now) continue;
      this.due.set(id, nextProbeAt(now, probeOffsetMs(id, intervalMs), intervalMs));
      if (!leading) continue;
      this.running.add(id);
      void round()
        .catch((err: unknown) => this.o.onError?.(err))
        .finally(() => this.running.delete(id));
    }
  }

  /** One probe round of a model: its targets probed together, as far as the concurrency cap lets them. */
  async round(m: CompiledModel): Promise<void> {
    const at = this.now();
    const results = await Promise.all(m.targets.map((t) => this.slots.run(() => probeTarget(this.o.providers, m, t, at, this.now))));
    const { statuses, state } = await this.judge(m.id, this.intervalOf(m), at, results);
    await this.o.onRound?.(m, statuses, state);
    this.rounds.set(m.id, (this.rounds.get(m.id) ?? 0) + 1);
  }

  /** One probe round of an McpServer (subject `mcp:<name>`, one target), through the same concurrency cap. */
  async roundMcp(s: CompiledMcpServer): Promise<void> {
    const at = this.now();
    const id = mcpSubject(s.name);
    const result = await this.slots.run(() => probeMcpServer(s, at, this.now));
    await this.judge(id, this.mcpInterval(), at, [result]);
    this.rounds.set(id, (this.rounds.get(id) ?? 0) + 1);
  }

  /** States from a round's probes and the live traffic, published; the round kept; incidents opened or resolved. */
  private async judge(id: string, intervalS: number, at: number, results: ProbeResult[]): Promise<{ statuses: TargetStatus[]; state: State }> {
    const live = await this.o.board.live(this.now()).catch((err: unknown) => {
      this.o.onError?.(err);
      return new Map();
    });
    const declared = this.o.declared?.() ?? [];
    const maintenance = inMaintenance(declared, id, at);
    const statuses: TargetStatus[] = results.map((r) => {
      const k = targetKey(id, r.target);
      const log = [...(this.recent.get(k) ?? []), r].slice(-3);
      this.recent.set(k, log);
      const state: State = maintenance
        ? 'under_maintenance'
        : targetState(log, live.get(k) ?? { calls: 0, failures: 0 }, this.o.thresholds ?? DEFAULT_THRESHOLDS);
      return { model: id, target: r.target, state, lastProbe: r.at, latencyMs: r.latencyMs, message: r.message };
    });
    const state = modelState(
      statuses.map((s) => s.state),
      maintenance,
    );
    await this.o.board.publish(statuses);
    await this.o.history.addRound({ model: id, at, intervalMs: intervalS * 1000, state, probes: results });
    let track = this.tracks.get(id);
    if (!track) this.tracks.set(id, (track = newTrack()));
    const detail = results
      .filter((r) => !r.ok)
      .map((r) => r.message)
      .join('; ');
    const declaredOpen = declared.some((i) => i.models.includes(id) && i.status !== 'resolved' && i.scheduled === null);
    const change = step(track, { model: id, state, detail, at, declaredOpen }, randomUUID);
    if (change) await this.o.history.saveIncident(change.incident);
    return { statuses, state };
  }
}
