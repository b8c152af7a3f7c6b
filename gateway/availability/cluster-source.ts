// The status pages' source in a cluster: states on the Redis board and history, incidents and declared incidents in
// Redis, all written by the operator's leader; the console reads only Redis (declared incidents refreshed every 2 s).
import type { Snapshot } from '../contract/snapshot.ts';
import type { RedisClient } from '../state/redis-connect.ts';
import { RedisBoard } from './board.ts';
import { intervalFromEnv } from './monitor.ts';
import { RedisHistory } from './redis-history.ts';
import type { Incident } from './types.ts';
import { statusSource, type StatusSource } from './view.ts';

export function clusterStatusSource(o: {
  redis: RedisClient;
  prefix: string;
  snapshot: () => Snapshot;
  env: Record<string, string | undefined>;
  onError?: (err: unknown) => void;
}): StatusSource & { close(): void } {
  const history = new RedisHistory(o.redis, o.prefix);
  let declared: Incident[] = [];
  const refresh = (): Promise<void> =>
    history.declared().then((d) => {
      declared = d;
    });
  const timer = setInterval(() => void refresh().catch((err: unknown) => o.onError?.(err)), 2_000);
  timer.unref();
  void refresh().catch((err: unknown) => o.onError?.(err));
  const source = statusSource({
    snapshot: o.snapshot,
    board: new RedisBoard(o.redis, o.prefix),
    history,
    intervalSeconds: intervalFromEnv(o.env),
    declared: () => declared,
  });
  return {
    ...source,
    async view() {
      await refresh().catch((err: unknown) => o.onError?.(err));
      return source.view();
    },
    close: () => clearInterval(timer),
  };
}
