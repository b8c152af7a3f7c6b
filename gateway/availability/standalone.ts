// Availability in one process (npm start): it probes its own targets, keeps the states on a board in memory (or in
// Redis with REDIS_URL, where other gateways read them too) and the history and incidents in memory.
import type { Snapshot } from '../contract/snapshot.ts';
import { ProviderRegistry } from '../providers/registry.ts';
import type { RedisClient } from '../state/redis-connect.ts';
import { MemoryBoard, RedisBoard, type Board } from './board.ts';
import { TargetHealth } from './health.ts';
import { MemoryHistory, type History } from './history.ts';
import { concurrencyFromEnv, intervalFromEnv, Monitor } from './monitor.ts';
import type { Incident } from './types.ts';
import { statusSource, type StatusSource } from './view.ts';

export interface LocalAvailability {
  board: Board;
  history: History;
  health: TargetHealth;
  monitor: Monitor;
  source: StatusSource;
  close(): Promise<void>;
}

export interface LocalAvailabilityOptions {
  snapshot: () => Snapshot;
  env: Record<string, string | undefined>;
  redis?: { client: RedisClient; prefix: string };
  history?: History;
  declared?: () => readonly Incident[];
  onError?: (err: unknown) => void;
  /** Start the probe and refresh timers (default true; tests drive rounds themselves). */
  start?: boolean;
}

export function localAvailability(o: LocalAvailabilityOptions): LocalAvailability {
  const intervalSeconds = intervalFromEnv(o.env);
  const board = o.redis ? new RedisBoard(o.redis.client, o.redis.prefix) : new MemoryBoard();
  const history = o.history ?? new MemoryHistory();
  const providers = new ProviderRegistry();
  const health = new TargetHealth(board, { onError: o.onError });
  const monitor = new Monitor({
    snapshot: o.snapshot,
    providers,
    board,
    history,
    intervalSeconds,
    concurrency: concurrencyFromEnv(o.env),
    declared: o.declared,
    onError: o.onError,
  });
  if (o.start !== false) {
    health.start();
    monitor.start();
  }
  const source = statusSource({ snapshot: o.snapshot, board, history, intervalSeconds, declared: o.declared });
  return {
    board,
    history,
    health,
    monitor,
    source,
    async close() {
      await monitor.stop();
      await health.close();
      await providers.close();
      await history.close();
    },
  };
}
