// Availability in one process (npm start): it probes its own targets, keeps the states on a board in memory and the
// history and incidents in memory. With REDIS_URL the board, history and incidents are in Redis, and of the processes
// sharing that Redis only the holder of the prober lease probes (prober-lease.ts): one set of probes, whatever the
// number of processes, and every process reads the same states and history.
import type { Snapshot } from '../contract/snapshot.ts';
import { ProviderRegistry } from '../providers/registry.ts';
import type { RedisClient } from '../state/redis-connect.ts';
import { MemoryBoard, RedisBoard, type Board } from './board.ts';
import { TargetHealth } from './health.ts';
import { MemoryHistory, type History } from './history.ts';
import { concurrencyFromEnv, intervalFromEnv, Monitor } from './monitor.ts';
import { ProberLease } from './prober-lease.ts';
import { RedisHistory } from './redis-history.ts';
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
  const history = o.history ?? (o.redis ? new RedisHistory(o.redis.client, o.redis.prefix) : new MemoryHistory());
  // Started with the timers: tests that drive rounds themselves probe whatever the lease.
  const lease = o.redis && o.start !== false ? new ProberLease(o.redis.client, o.redis.prefix, { onError: o.onError }) : null;
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
    leading: lease ? () => lease.held() : undefined,
  });
  let closed = false;
  if (o.start !== false) {
    health.start();
    // The monitor starts once the lease's first attempt has answered, so the lease holder's first rounds are its own.
    if (lease)
      void lease.renew().finally(() => {
        if (closed) return;
        lease.start();
        monitor.start();
      });
    else monitor.start();
  }
  const source = statusSource({ snapshot: o.snapshot, board, history, intervalSeconds, declared: o.declared });
  return {
    board,
    history,
    health,
    monitor,
    source,
    async close() {
      closed = true;
      await monitor.stop();
      await lease?.stop();
      await health.close();
      await providers.close();
      await history.close();
    },
  };
}
