// What the pipeline needs from the process: config, state, providers, the key pepper, a clock.
import type { FastifyBaseLogger } from 'fastify';
import type { Snapshot } from '../contract/snapshot.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { Store } from '../state/store.ts';
import type { Metrics } from '../http/metrics.ts';

export interface ConfigSource {
  current(): Snapshot;
}

/** Graceful shutdown's view of the calls (lifecycle/drain.ts): it counts them and ends them once its budget is spent. */
export interface CallLifecycle {
  track<T>(call: () => Promise<T>): Promise<T>;
  /** Aborted when calls in flight must end now; its reason is the GatewayError they end with. */
  readonly ending: AbortSignal;
}

export interface GatewayDeps {
  config: ConfigSource;
  store: Store;
  providers: ProviderRegistry;
  pepper: string;
  metrics: Metrics;
  log: FastifyBaseLogger;
  now: () => number;
  lifecycle?: CallLifecycle;
}
