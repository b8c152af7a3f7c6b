// What the pipeline needs from the process: config, state, providers, the key pepper, a clock.
import type { FastifyBaseLogger } from 'fastify';
import type { Snapshot } from '../contract/snapshot.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { Store } from '../state/store.ts';
import type { Metrics } from '../http/metrics.ts';

export interface ConfigSource {
  current(): Snapshot;
}

export interface GatewayDeps {
  config: ConfigSource;
  store: Store;
  providers: ProviderRegistry;
  pepper: string;
  metrics: Metrics;
  log: FastifyBaseLogger;
  now: () => number;
}
