// `node gateway/main.ts --cluster` (npm run gateway): config, keys and state come from Redis only, as the operator
// wrote them. The gateway never talks to Kubernetes and never writes config.
import type { FastifyInstance } from 'fastify';
import { metricsListen, serveGatewayMetrics, type MetricsServer } from '../http/metrics-server.ts';
import { Drain, drainSeconds } from '../lifecycle/drain.ts';
import { build } from '../server.ts';
import { keyringFromEnv } from '../contract/sealed-credentials.ts';
import { createRedis } from '../state/redis-connect.ts';
import { redactUrl, redisOptionsFromEnv } from '../state/redis-env.ts';
import { RedisStore } from '../state/redis-store.ts';
import { RedisLastUsed, withLastUsed } from '../state/last-used.ts';
import { RedisConfigSource } from './redis-config-source.ts';

export const CLUSTER_NEEDS = 'Cluster mode needs REDIS_URL (the Redis the operator writes to) and SVC_KEY_PEPPER '
  + '(the same secret the operator hashes keys with).';

type Env = Record<string, string | undefined>;

function pollMs(env: Env): number {
  const v = env.SVC_CONFIG_POLL_MS;
  if (v === undefined || v === '') return 3000;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 100) throw new Error(`SVC_CONFIG_POLL_MS must be an integer >= 100, got ${JSON.stringify(v)}`);
  return n;
}

export interface ClusterGateway {
  app: FastifyInstance;
  address: string;
  /** Port of /metrics, /healthz and /readyz (SVC_METRICS_PORT), never the API port. */
  metricsPort: number;
  /** http://host:port of that listener. */
  metricsUrl: string;
  stop(): Promise<void>;
}

/** Starts the cluster-mode gateway; throws an Error with a readable message when it cannot. */
export async function startClusterGateway(env: Env, port: number): Promise<ClusterGateway> {
  const url = env.REDIS_URL;
  const pepper = env.SVC_KEY_PEPPER;
  if (!url || !pepper) throw new Error(CLUSTER_NEEDS);
  const options = redisOptionsFromEnv(url, env);
  const poll = pollMs(env);
  const drainMs = drainSeconds(env) * 1000;
  metricsListen(env); // a bad SVC_METRICS_PORT fails here, before any connection
  const drain = new Drain();
  // The config source and the store log through the server's logger, which exists once the server is built.
  const logger: { app?: FastifyInstance } = {};
  const log = {
    info: (m: string): void => logger.app?.log.info(m),
    warn: (m: string, err?: unknown): void => logger.app?.log.warn({ err }, m),
  };
  let store: RedisStore;
  try {
    store = await RedisStore.connect({ ...options, onWarning: log.warn });
  } catch (err) {
    throw new Error(`Cannot use Redis at ${redactUrl(url)}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  // Its own connection (a subscribed client runs nothing else); a Cluster subscribes on one node and hears every publish.
  const subscriber = createRedis(options);
  subscriber.on('error', (err: unknown) => log.warn('Redis subscriber connection error', err));
  const source = new RedisConfigSource({ redis: store.redis, subscriber, prefix: store.prefix, keyring: keyringFromEnv(env), pollMs: poll, log });
  const { app, metrics: gatewayMetrics } = await build({
    // Each admitted call touches its key's "last used" (at most one HSET a minute per key), which the console shows.
    config: source, store: withLastUsed(store, new RedisLastUsed(store.redis, store.prefix)), pepper, ready: () => source.ready(), drain,
  });
  logger.app = app;
  await source.start();
  if (!source.ready()) app.log.warn('No config in Redis yet: not ready until the operator publishes one');
  let address: string;
  let metrics: MetricsServer & { url: string };
  try {
    address = await app.listen({ port, host: env.HOST ?? '0.0.0.0' });
    // Same readiness as the API port's /readyz; it keeps answering (503 draining) while the API port drains.
    metrics = await serveGatewayMetrics(gatewayMetrics.registry, env, () => (drain.draining ? 'draining' : source.ready()));
  } catch (err) {
    await app.close();
    await source.close();
    await store.close();
    throw err;
  }
  return {
    app,
    address,
    metricsPort: metrics.port,
    metricsUrl: metrics.url,
    stop: async () => {
      await drain.run(app, drainMs, app.log);
      await source.close();
      await store.close();
      await metrics.close();
    },
  };
}
