// The gateway under abuse: built in process (gateway/server.ts build()) over the memory store or a real Redis, with
// every store call counted (a refusal must come before any of them) and, for the disconnect tests, admission slowed.
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { compile } from '../../gateway/contract/compile.ts';
import type { Snapshot } from '../../gateway/contract/snapshot.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import { build, type BuildOptions } from '../../gateway/server.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import type { Ledger, Store, StoreAdmin } from '../../gateway/state/store.ts';
import { MemoryUsageSink, type UsageEvent } from '../../gateway/usage/event.ts';
import { TEST_PEPPER } from '../helpers/gateway.ts';
import type { TestRedis } from '../helpers/redis.ts';

/** The timeouts the fixed build() takes (issue 18, item 5): headers, whole request, idle keep-alive. */
export interface Timeouts {
  headersMs: number;
  requestMs: number;
  idleMs: number;
}

export interface AbuseOptions {
  /** A real Redis (RedisStore) instead of the memory store. */
  redis?: TestRedis;
  holdTtlMs?: number;
  /** Each store.admit waits this long first (a slow or stalled store). */
  admitDelayMs?: number;
  timeouts?: Timeouts;
  bodyLimit?: number;
}

export interface StoreCalls {
  findKey: number;
  admit: number;
  settle: number;
  record: number;
  view: number;
}

export interface AbuseGateway {
  url: string;
  port: number;
  app: FastifyInstance;
  /** Client connections the gateway has accepted since it started. */
  accepted(): number;
  store: Store & StoreAdmin;
  /** Set when the gateway runs on Redis. */
  redisStore: RedisStore | null;
  snapshot: Snapshot;
  calls: StoreCalls;
  totalStoreCalls(): number;
  ledger(account: string): Promise<Ledger>;
  events(account: string): Promise<UsageEvent[]>;
  close(): Promise<void>;
}

function compileDocs(docs: object[]): ReturnType<typeof compile> {
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `abuse#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  const result = compile(parsed.set, { pepper: TEST_PEPPER });
  if (result.problems.length > 0) throw new Error(JSON.stringify(result.problems));
  return result;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Counts each store call the request path makes; optionally delays admission. */
function instrument(store: Store, calls: StoreCalls, admitDelayMs: number): void {
  const findKey = store.findKey.bind(store);
  const admit = store.admit.bind(store);
  const settle = store.settle.bind(store);
  const record = store.record.bind(store);
  const view = store.view.bind(store);
  store.findKey = (hash) => {
    calls.findKey++;
    return findKey(hash);
  };
  store.admit = async (req) => {
    calls.admit++;
    if (admitDelayMs > 0) await sleep(admitDelayMs);
    return admit(req);
  };
  store.settle = (hold, s) => {
    calls.settle++;
    return settle(hold, s);
  };
  store.record = (event) => {
    calls.record++;
    return record(event);
  };
  store.view = (account, key, now) => {
    calls.view++;
    return view(account, key, now);
  };
}

export async function startAbuseGateway(docs: object[], opts: AbuseOptions = {}): Promise<AbuseGateway> {
  const result = compileDocs(docs);
  const sink = new MemoryUsageSink();
  const redisStore = opts.redis ? await RedisStore.connect({ url: opts.redis.url, prefix: opts.redis.prefix, holdTtlMs: opts.holdTtlMs }) : null;
  const store: Store & StoreAdmin = redisStore ?? new MemoryStore(sink, { holdTtlMs: opts.holdTtlMs });
  await store.applyConfig(result.snapshot, result.keys);
  const calls: StoreCalls = { findKey: 0, admit: 0, settle: 0, record: 0, view: 0 };
  instrument(store, calls, opts.admitDelayMs ?? 0);
  const base: BuildOptions = {
    config: { current: () => result.snapshot },
    store,
    pepper: TEST_PEPPER,
    logLevel: 'silent',
    bodyLimit: opts.bodyLimit,
  };
  // `timeouts` is the BuildOptions field issue 18 adds; passed by spread so this file type-checks before it exists
  // (until then the option is ignored and the slow-body tests fail on behaviour, not on types).
  const extra = opts.timeouts ? { timeouts: opts.timeouts } : {};
  const { app } = await build({ ...base, ...extra });
  let accepted = 0;
  app.server.on('connection', () => accepted++);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    app,
    accepted: () => accepted,
    store,
    redisStore,
    snapshot: result.snapshot,
    calls,
    totalStoreCalls: () => calls.findKey + calls.admit + calls.settle + calls.record + calls.view,
    ledger: (account) => store.ledger(account),
    events: async (account) => (redisStore ? redisStore.usageEvents(account) : sink.events.filter((e) => e.account === account)),
    close: async () => {
      await app.close();
      // Bounded: a store still retrying failed settles would otherwise hold the test file until its hold TTL.
      const closed = await Promise.race([store.close().then(() => true), sleep(3000).then(() => false)]);
      if (!closed) redisStore?.redis.disconnect();
    },
  };
}

/** Polls `cond` until it holds or `ms` passed; returns whether it held (the caller asserts, with its own message). */
export async function within(ms: number, cond: () => boolean | Promise<boolean>): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > end) return false;
    await sleep(25);
  }
}

/**
 * Resolves once the gateway holds no client connection: every call of a storm has been read and seen to end. On a
 * loaded machine the gateway may still be working through the storm's backlog after its last client left; what is
 * left open upstream is counted only after that.
 */
export async function clientsDrained(gw: Pick<AbuseGateway, 'app' | 'accepted'>, expected: number, ms = 30_000): Promise<void> {
  const count = (): Promise<number> => new Promise((resolve, reject) => gw.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
  const drained = async (): Promise<boolean> => gw.accepted() >= expected && (await count()) === 0;
  if (!(await within(ms, drained))) {
    throw new Error(`after ${ms} ms the gateway has accepted ${gw.accepted()} of ${expected} connections and still holds ${await count()}`);
  }
}

/** A small seeded PRNG (mulberry32): the same seed gives the same run. */
export function prng(seed: number): { next(): number; int(n: number): number; pick<T>(xs: readonly T[]): T } {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return { next, int, pick: (xs) => xs[int(xs.length)] as (typeof xs)[number] };
}

export { sleep };
