// Several real gateway processes (node gateway/main.ts) sharing one Redis, as behind a load balancer; loopback only.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { startGatewayProcess, type GatewayProcess } from './process.ts';
import { toYaml } from './manifests.ts';
import { afterAll, beforeAll } from 'vitest';
import { startRedis, type TestRedis } from './redis.ts';
import { clusterAsTestRedis, clusterWanted } from './redis-cluster.ts';

export const FLEET_PEPPER = 'fleet-test-pepper-shared-by-every-process';

export interface Fleet {
  procs: GatewayProcess[];
  urls: string[];
  /** Each process's metrics port (/metrics is not on the API port). */
  metricsUrls: string[];
  /** Starts one more process on the same Redis, with these manifests (default: the fleet's). */
  add(docs?: object[], env?: Record<string, string>): Promise<GatewayProcess>;
  stop(): Promise<void>;
}

export function writeManifests(docs: object[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-fleet-')), 'manifests.yaml');
  writeFileSync(file, toYaml(docs));
  return file;
}

async function waitReady(url: string): Promise<void> {
  const end = Date.now() + 15_000;
  while (Date.now() < end) {
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} never became ready`);
}

/** Where the fleet keeps its state: one Redis, or (cluster) a Redis Cluster whose seed nodes `url` lists. */
export type FleetRedis = Pick<TestRedis, 'url' | 'prefix'> & { cluster?: boolean };

/** SVC_TEST_ADMISSION_LEASES=1: every fleet process admits with leases (the `leases` test project runs the fleet's
 * money, limit and revocation tests so, unchanged). */
export function fleetLeases(): Record<string, string> {
  return process.env.SVC_TEST_ADMISSION_LEASES === '1' ? { SVC_ADMISSION_LEASES: '1' } : {};
}

export async function startFleet(n: number, redis: FleetRedis, docs: object[], env: Record<string, string> = {}): Promise<Fleet> {
  const procs: GatewayProcess[] = [];
  const add = async (d: object[] = docs, extra: Record<string, string> = {}): Promise<GatewayProcess> => {
    const p = await startGatewayProcess({
      SVC_CONFIG: writeManifests(d),
      REDIS_URL: redis.url,
      SVC_REDIS_PREFIX: redis.prefix,
      SVC_KEY_PEPPER: FLEET_PEPPER,
      ...(redis.cluster ? { SVC_REDIS_CLUSTER: '1' } : {}),
      ...fleetLeases(),
      ...env,
      ...extra,
    });
    procs.push(p);
    await waitReady(p.url);
    return p;
  };
  // Started together: their concurrent publishes must give the same state as one.
  await Promise.all(Array.from({ length: n }, () => add()));
  return {
    procs,
    get urls() {
      return procs.map((p) => p.url);
    },
    get metricsUrls() {
      return procs.map((p) => p.metricsUrl);
    },
    add,
    stop: async () => {
      // A process a test killed has exited already: only the live ones are stopped (and waited for).
      await Promise.all(procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null).map((p) => p.stop()));
    },
  };
}

/** A store on the fleet's Redis and prefix: what the operator would use (ledger, revoke, usage stream). */
export function fleetStore(redis: FleetRedis): Promise<RedisStore> {
  return RedisStore.connect({ url: redis.url, prefix: redis.prefix, cluster: redis.cluster });
}

export interface CallResult {
  status: number;
  retryAfter: string | null;
  startedAt: number;
  ms: number;
  body: string;
}

export async function chat(url: string, key: string, body: Record<string, unknown> = {}): Promise<CallResult> {
  const startedAt = Date.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-fast', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 50, ...body }),
  });
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), startedAt, ms: Date.now() - startedAt, body: text };
}

export async function me(url: string, key: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export function countBy<T>(xs: readonly T[], f: (x: T) => string | number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[String(f(x))] = (out[String(f(x))] ?? 0) + 1;
  return out;
}

export interface FleetContext {
  redis: TestRedis;
  fleet: Fleet;
  store: RedisStore;
}

/**
 * With leases on, the lease logic must have been in play: calls admitted from leases, or leases asked for and refused
 * (a test whose caps fit a few calls takes the per-call path, as it should); otherwise the run said nothing of leases.
 */
export async function leasesUsed(name: string, fleet: Fleet): Promise<void> {
  const n: Record<string, number> = {};
  for (const url of fleet.metricsUrls) {
    const text = await fetch(`${url}/metrics`).then((r) => r.text());
    for (const m of text.matchAll(/^svc_gateway_admission_(calls_total\{path|lease_grants_total\{outcome)="(\w+)"\} (\d+)/gm)) {
      const k = `${m[1]?.startsWith('calls') ? 'admitted' : 'grants'} ${m[2]}`;
      n[k] = (n[k] ?? 0) + Number(m[3]);
    }
  }
  console.log(`${name} with leases: ${JSON.stringify(n)}`);
  if (!n['admitted lease'] && !n['grants refused']) {
    throw new Error(`SVC_TEST_ADMISSION_LEASES=1, but ${name}'s calls neither came from a lease nor asked for one: ${JSON.stringify(n)}`);
  }
}

/**
 * A test file's Redis, n gateway processes on it and a store client, started before its tests, stopped after.
 * With SVC_TEST_REDIS_CLUSTER=1 (or REDIS_CLUSTER_URL set) the same tests run on a 3-master, 3-replica Redis Cluster.
 */
export function useFleet(name: string, docs: object[], n = 3): FleetContext {
  const ctx = {} as FleetContext;
  beforeAll(async () => {
    ctx.redis = clusterWanted() ? await clusterAsTestRedis(name) : await startRedis(name);
    ctx.fleet = await startFleet(n, ctx.redis, docs);
    ctx.store = await fleetStore(ctx.redis);
  });
  afterAll(async () => {
    if (ctx.fleet && fleetLeases().SVC_ADMISSION_LEASES) await leasesUsed(name, ctx.fleet);
    await ctx.store?.close();
    await ctx.fleet?.stop();
    await ctx.redis?.stop();
  });
  return ctx;
}
