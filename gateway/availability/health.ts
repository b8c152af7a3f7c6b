// A gateway's view of availability on the call path: which targets are in major_outage (read from the board every
// few seconds, so the call path does no I/O), and the outcomes of its own upstream attempts, counted in memory and
// added to the board in one pipeline every few seconds. Per call: a Map lookup and two integer additions.
import type { Board } from './board.ts';
import { targetKey, type LiveCounts, type State } from './types.ts';

export interface HealthOptions {
  /** How often the states are read from the board (ms). */
  readMs?: number;
  /** How often the counts are added to the board (ms). */
  flushMs?: number;
  onError?: (err: unknown) => void;
  now?: () => number;
}

export class TargetHealth {
  private down = new Set<string>();
  private last: ReadonlyArray<{ model: string; target: string; state: State }> = [];
  private counts = new Map<string, LiveCounts>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly now: () => number;
  private readonly board: Board;
  private readonly o: HealthOptions;

  constructor(board: Board, o: HealthOptions = {}) {
    this.board = board;
    this.o = o;
    this.now = o.now ?? Date.now;
  }

  start(): this {
    const every = (ms: number, f: () => Promise<void>): void => {
      const t = setInterval(() => void f().catch((err: unknown) => this.o.onError?.(err)), ms);
      t.unref();
      this.timers.push(t);
    };
    every(this.o.readMs ?? 2_000, () => this.refresh());
    every(this.o.flushMs ?? 5_000, () => this.flush());
    void this.refresh().catch((err: unknown) => this.o.onError?.(err));
    return this;
  }

  /** A target the probes put in major_outage: tried last. */
  isDown(model: string, target: string): boolean {
    return this.down.size > 0 && this.down.has(targetKey(model, target));
  }

  /** Every target's state as last read from the board (the metrics' svc_gateway_upstream_state). */
  targets(): ReadonlyArray<{ model: string; target: string; state: State }> {
    return this.last;
  }

  /** One upstream attempt's outcome; `failed` only for upstream failures (5xx, timeout, connect error). */
  record(model: string, target: string, failed: boolean): void {
    const k = targetKey(model, target);
    let c = this.counts.get(k);
    if (!c) this.counts.set(k, (c = { calls: 0, failures: 0 }));
    c.calls++;
    if (failed) c.failures++;
  }

  async refresh(): Promise<void> {
    const states = await this.board.states();
    this.last = states.map((s) => ({ model: s.model, target: s.target, state: s.state }));
    this.down = new Set(states.filter((s) => s.state === 'major_outage').map((s) => targetKey(s.model, s.target)));
  }

  async flush(): Promise<void> {
    if (this.counts.size === 0) return;
    const counts = this.counts;
    this.counts = new Map();
    await this.board.addLive(counts, this.now());
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await this.flush().catch((err: unknown) => this.o.onError?.(err));
  }
}
