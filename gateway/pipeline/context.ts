// What the pipeline needs from the process: config, state, providers, the key pepper, a clock, a log and a place
// for each call's outcome (metrics). Interfaces only: no transport, no framework.
import type { KeyRecord, Snapshot } from '../contract/snapshot.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { Store } from '../state/store.ts';
import type { UsageEvent } from '../usage/event.ts';

/** The part of a pino logger the pipeline writes to (fastify's logger is one). */
export interface CallLog {
  error(obj: object, msg: string): void;
}

/** Counts each call's outcome (gateway/http/metrics.ts is the Prometheus one). */
export interface CallMetrics {
  observe(e: UsageEvent): void;
  /** The time a call spent in the gateway before its first upstream request (key, limits, hold, routing), in s. */
  addedLatency?(seconds: number): void;
  /** A key that is calling (before admission): the Prometheus metrics track the budgets of keys that have one. */
  keySeen?(key: KeyRecord): void;
}

export interface ConfigSource {
  current(): Snapshot;
}

/** Graceful shutdown's view of the calls (lifecycle/drain.ts): it counts them and ends them once its budget is spent. */
export interface CallLifecycle {
  track<T>(call: () => Promise<T>): Promise<T>;
  /** Aborted when calls in flight must end now; its reason is the GatewayError they end with. */
  readonly ending: AbortSignal;
}

/** What the pipeline knows of target availability (gateway/availability/health.ts): no I/O on the call path. */
export interface Availability {
  /** The target is in major_outage: tried after every other target and fallback. */
  isDown(model: string, target: string): boolean;
  /** An upstream attempt's outcome; `failed` for upstream failures (5xx, timeout, connect error). */
  record(model: string, target: string, failed: boolean): void;
}

export interface GatewayDeps {
  config: ConfigSource;
  store: Store;
  providers: ProviderRegistry;
  pepper: string;
  metrics: CallMetrics;
  log: CallLog;
  now: () => number;
  lifecycle?: CallLifecycle;
  availability?: Availability;
}
