// A gateway in process on a real Redis (the RedisStore every replica uses), for the response cache's tests: the
// cache entries, the holds and the usage events all live in that Redis.
import type { FastifyInstance } from 'fastify';
import { compile } from '../../gateway/contract/compile.ts';
import { hashKey } from '../../gateway/contract/keys.ts';
import type { Snapshot } from '../../gateway/contract/snapshot.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import type { Metrics } from '../../gateway/http/metrics.ts';
import { build } from '../../gateway/server.ts';
import { Drain } from '../../gateway/lifecycle/drain.ts';
import { accountKeys, RedisStore } from '../../gateway/state/redis-store.ts';
import type { UsageEvent } from '../../gateway/usage/event.ts';
import { TEST_PEPPER } from '../helpers/gateway.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

export interface CacheGateway {
  url: string;
  app: FastifyInstance;
  store: RedisStore;
  snapshot: Snapshot;
  metrics: Metrics;
  /** The usage events of an account once every call is over (answered, settled, its answer stored or not). */
  events(account: string): Promise<UsageEvent[]>;
  /** Waits until no call is in flight (settlement and the cache write come after the answer). */
  idle(): Promise<void>;
  /** Entries the account has in the cache. */
  entries(account: string): Promise<number>;
  revoke(key: string): Promise<void>;
  close(): Promise<void>;
}

export async function cacheGateway(redis: Pick<TestRedis, 'url' | 'prefix'>, docs: object[], opts: { cacheAccountBytes?: number } = {}): Promise<CacheGateway> {
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `test#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  const result = compile(parsed.set, { pepper: TEST_PEPPER });
  if (result.problems.length > 0) throw new Error(JSON.stringify(result.problems));
  const store = await RedisStore.connect({ url: redis.url, prefix: redis.prefix });
  await store.applyConfig(result.snapshot, result.keys);
  const drain = new Drain();
  const { app, metrics } = await build({
    drain,
    config: { current: () => result.snapshot },
    store,
    pepper: TEST_PEPPER,
    logLevel: 'silent',
    cacheAccountBytes: opts.cacheAccountBytes,
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    app,
    store,
    snapshot: result.snapshot,
    metrics,
    events: async (account) => {
      await until(() => drain.inFlight === 0, 5000, 'calls in flight');
      return store.usageEvents(account);
    },
    idle: () => until(() => drain.inFlight === 0, 5000, 'calls in flight'),
    entries: (account) => store.redis.hlen(accountKeys(redis.prefix, account).cache),
    revoke: (key) => store.revoke(hashKey(key, TEST_PEPPER)),
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}

/** A metric's value from the gateway's registry (0 when the series does not exist). */
export async function metricValue(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const m = await metrics.registry.getSingleMetric(name)?.get();
  const v = m?.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value ?? 0;
}
