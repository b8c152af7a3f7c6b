// One way for every process (gateway standalone and cluster mode, operator, exporter, console) to reach Redis:
// a single server or a Redis Cluster, plain or TLS, default user or an ACL user, all from the same settings.
//
//   REDIS_URL             redis://[user:pass@]host:port[/db]  or  rediss://... (TLS)
//   SVC_REDIS_CLUSTER=1   REDIS_URL is a comma-separated list of seed nodes of a Redis Cluster (any of its nodes; the
//                         client learns the rest, and follows MOVED/ASK and topology changes without a restart)
//   SVC_REDIS_CA_FILE     PEM CA bundle the server certificate must chain to (rediss://)
//   SVC_REDIS_CERT_FILE   PEM client certificate, with SVC_REDIS_KEY_FILE its private key (servers that ask for one)
//
// Usage:  const redis = await connectRedis(redisConnectionFromEnv(process.env.REDIS_URL, process.env), { commandTimeout: 1000 });
// The result is an ioredis `Redis` or `Cluster` (type RedisClient): both take the same commands. A Cluster refuses
// multi-key commands, MULTI and pipelines whose keys are in different hash slots: keep each of them in one slot.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

export type RedisClient = Redis | Cluster;

export interface RedisConnection {
  /** One URL, or (cluster) one or more comma-separated seed node URLs. */
  url: string;
  cluster?: boolean;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/** Per-process behaviour: the request path fails fast, the exporter and operator are patient. */
export interface RedisTuning {
  commandTimeout?: number;
  connectTimeout?: number;
  /** 0: a command fails at once when its connection drops (the request path); ioredis' default otherwise. */
  maxRetriesPerRequest?: number | null;
  /** false: commands fail at once while disconnected instead of queueing. */
  enableOfflineQueue?: boolean;
  autoResendUnfulfilledCommands?: boolean;
  /** Delay before reconnect attempt n (ms). */
  retryDelayMs?: (attempt: number) => number;
  /** Default true: nothing is sent before connect() (connectRedis calls it). */
  lazyConnect?: boolean;
  /** Cluster: how often the slot map is refreshed even without a MOVED (default 5000 ms). */
  slotsRefreshIntervalMs?: number;
}

type Env = Record<string, string | undefined>;

const truthy = (v: string | undefined): boolean => v !== undefined && ['1', 'true', 'yes', 'on'].includes(v.trim().toLowerCase());

/** The connection settings of REDIS_URL and SVC_REDIS_CLUSTER, SVC_REDIS_CA_FILE, SVC_REDIS_CERT_FILE, SVC_REDIS_KEY_FILE. */
export function redisConnectionFromEnv(url: string, env: Env): RedisConnection {
  const c: RedisConnection = { url, cluster: truthy(env.SVC_REDIS_CLUSTER) };
  if (env.SVC_REDIS_CA_FILE) c.caFile = env.SVC_REDIS_CA_FILE;
  if (env.SVC_REDIS_CERT_FILE) c.certFile = env.SVC_REDIS_CERT_FILE;
  if (env.SVC_REDIS_KEY_FILE) c.keyFile = env.SVC_REDIS_KEY_FILE;
  if (Boolean(c.certFile) !== Boolean(c.keyFile)) throw new Error('SVC_REDIS_CERT_FILE and SVC_REDIS_KEY_FILE go together: set both or neither');
  if (!c.cluster && splitUrls(url).length > 1) throw new Error('REDIS_URL holds several URLs: set SVC_REDIS_CLUSTER=1 to use them as Redis Cluster seed nodes');
  return c;
}

export function splitUrls(url: string): string[] {
  return url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

interface Parsed {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db: number;
  tls: boolean;
}

function parseUrl(raw: string): Parsed {
  let u: URL;
  try {
    u = new URL(raw.includes('://') ? raw : `redis://${raw}`);
  } catch {
    throw new Error('REDIS_URL is not a valid redis:// or rediss:// URL');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new Error(`REDIS_URL must use redis:// or rediss://, not ${u.protocol}//`);
  const db = u.pathname && u.pathname !== '/' ? Number(u.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new Error('REDIS_URL: the path must be a database number');
  return {
    host: u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db,
    tls: u.protocol === 'rediss:',
  };
}

function tlsOptions(c: RedisConnection, wanted: boolean): ConnectionOptions | undefined {
  if (!wanted) {
    if (c.caFile || c.certFile) throw new Error('SVC_REDIS_CA_FILE / SVC_REDIS_CERT_FILE are set but REDIS_URL is not rediss://');
    return undefined;
  }
  const read = (file: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`Cannot read ${what} ${file}: ${(err as Error).message}`, { cause: err });
    }
  };
  return {
    ...(c.caFile ? { ca: read(c.caFile, 'SVC_REDIS_CA_FILE') } : {}),
    ...(c.certFile ? { cert: read(c.certFile, 'SVC_REDIS_CERT_FILE') } : {}),
    ...(c.keyFile ? { key: read(c.keyFile, 'SVC_REDIS_KEY_FILE') } : {}),
  };
}

/** Creates the client without connecting (connect() or the first command does). */
export function createRedis(c: RedisConnection, t: RedisTuning = {}): RedisClient {
  const urls = splitUrls(c.url).map(parseUrl);
  const first = urls[0];
  if (!first) throw new Error('REDIS_URL is empty');
  if (urls.some((u) => u.tls !== first.tls || u.username !== first.username || u.password !== first.password)) {
    throw new Error('REDIS_URL: every seed node must use the same scheme (redis:// or rediss://) and the same user and password');
  }
  const tls = tlsOptions(c, first.tls);
  const node: RedisOptions = {
    username: first.username,
    password: first.password,
    ...(tls ? { tls } : {}),
    ...(t.commandTimeout !== undefined ? { commandTimeout: t.commandTimeout } : {}),
    ...(t.connectTimeout !== undefined ? { connectTimeout: t.connectTimeout } : {}),
    ...(t.maxRetriesPerRequest !== undefined ? { maxRetriesPerRequest: t.maxRetriesPerRequest } : {}),
    ...(t.autoResendUnfulfilledCommands !== undefined ? { autoResendUnfulfilledCommands: t.autoResendUnfulfilledCommands } : {}),
  };
  const lazyConnect = t.lazyConnect ?? true;
  const retry = t.retryDelayMs;
  if (!c.cluster) {
    return new Redis({
      ...node,
      host: first.host,
      port: first.port,
      db: first.db,
      lazyConnect,
      ...(t.enableOfflineQueue !== undefined ? { enableOfflineQueue: t.enableOfflineQueue } : {}),
      ...(retry ? { retryStrategy: retry } : {}),
    });
  }
  if (urls.some((u) => u.db !== 0)) throw new Error('REDIS_URL: a Redis Cluster has only database 0');
  const options: ClusterOptions = {
    redisOptions: node,
    lazyConnect,
    scaleReads: 'master',
    // A failover moves slots: wait a little and ask again, a bounded number of times (each attempt is bounded by
    // commandTimeout), so a call fails with an error instead of hanging.
    maxRedirections: 16,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    retryDelayOnMoved: 0,
    slotsRefreshTimeout: Math.max(1000, t.commandTimeout ?? 1000),
    slotsRefreshInterval: t.slotsRefreshIntervalMs ?? 5000,
    ...(t.enableOfflineQueue !== undefined ? { enableOfflineQueue: t.enableOfflineQueue } : {}),
    ...(retry ? { clusterRetryStrategy: retry } : {}),
  };
  return new Cluster(
    urls.map((u) => ({ host: u.host, port: u.port })),
    options,
  );
}

/**
 * Creates the client and connects (a Cluster: learns the slot map and is ready), failing fast with the first error
 * when Redis cannot be reached. Errors after that are reported to `onError` (ioredis reconnects by itself).
 */
export async function connectRedis(c: RedisConnection, t: RedisTuning = {}, onError: (err: unknown) => void = () => {}): Promise<RedisClient> {
  const redis = createRedis(c, { ...t, lazyConnect: true });
  let first: unknown;
  redis.on('error', (err: unknown) => {
    first ??= err;
    onError(err);
  });
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw first instanceof Error ? first : err;
  }
  return redis;
}

export function isCluster(redis: RedisClient): redis is Cluster {
  return redis instanceof Cluster;
}

/** The servers holding the keyspace: every master of a Cluster, or the one server (whole-keyspace SCAN, tools, tests). */
export function masters(redis: RedisClient): Redis[] {
  return isCluster(redis) ? redis.nodes('master') : [redis];
}

/** Every key matching `pattern` across the whole keyspace (SCAN on each master; never KEYS). For tools and tests. */
export async function scanAll(redis: RedisClient, pattern = '*'): Promise<string[]> {
  const out: string[] = [];
  for (const node of masters(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      out.push(...keys);
    } while (cursor !== '0');
  }
  return out;
}
