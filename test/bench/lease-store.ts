// Admission and settle through the Redis store with leases off and on, side by side (`npm run bench -- --leases`
// runs this instead of the comparison): admit+settle pairs, 32 at a time, on one key far from its caps, with the
// gateway's own CPU, redis-server's CPU and the scripts Redis ran, per pair. The HTTP bench's subjects
// (gateway-redis, gateway-redis-leases) measure the same through the whole gateway.
import { feeShareNano } from '../../gateway/contract/money.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { account, keyRec, snapshot } from '../../gateway/state/store-suite-fixtures.ts';
import type { Hold } from '../../gateway/state/store.ts';
import { cpuSeconds, type Proc } from './procs.ts';
import { redis } from './subjects.ts';

const PAIRS = 20_000;
const CONCURRENCY = 32;

export interface LeaseFigures {
  mode: 'per call' | 'leases';
  pairsPerSec: number;
  gatewayCpuUs: number;
  redisCpuUs: number;
  scriptsPerPair: number;
  /** Redis commands per pair, those the scripts ran included (INFO commandstats): the same on any machine. */
  commandsPerPair: number;
  heapAfterMb: number;
}

/** Scripts run so far, and the other commands (a script's `redis.call`s count as commands of their own). */
async function scripts(store: RedisStore): Promise<{ scripts: number; commands: number }> {
  const info = await store.redis.info('commandstats');
  let scripts = 0;
  let commands = 0;
  for (const m of info.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g)) {
    if (m[1] === 'evalsha' || m[1] === 'eval') scripts += Number(m[2]);
    else if (m[1] !== 'info') commands += Number(m[2]);
  }
  return { scripts, commands };
}

let runs = 0;

async function run(server: Proc, leases: boolean, pairs: number): Promise<LeaseFigures> {
  // A prefix of its own per run: a run on the same prefix would find its call ids settled already (no-op settles).
  const prefix = `bench-${leases ? 'on' : 'off'}-${++runs}`;
  const store = await RedisStore.connect({ url: `redis://127.0.0.1:${server.port}`, prefix, leases: leases ? {} : null });
  const acct = account({ trialCreditNano: 1e15 });
  const key = keyRec({ rpm: 10_000_000, tpm: 10_000_000_000 });
  await store.applyConfig(snapshot([acct]), [key]);
  let seq = 0;
  const one = async (): Promise<void> => {
    const now = Date.now();
    const id = `b-${leases ? 1 : 0}-${++seq}`;
    const d = await store.admit({ eventId: id, key, account: acct, tokens: 100, holdNano: 5000, now });
    if (!d.ok) throw new Error(`refused: ${d.code}`);
    const h: Hold = d.hold;
    await store.settle(h, { costNano: 3000, tokens: 80, event: event(h, now) });
  };
  const worker = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await one();
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker(200))); // warm up
  await store.leases?.flushAll();
  const s0 = await scripts(store);
  const r0 = cpuSeconds(server.pid);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker(Math.ceil(pairs / CONCURRENCY))));
  await store.leases?.flushAll();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const r = cpuSeconds(server.pid) - r0;
  const done = Math.ceil(pairs / CONCURRENCY) * CONCURRENCY;
  const s1 = await scripts(store);
  await store.close();
  globalThis.gc?.();
  return {
    mode: leases ? 'leases' : 'per call',
    pairsPerSec: Math.round((done / ms) * 1000),
    gatewayCpuUs: Math.round(((c.user + c.system) / done) * 10) / 10,
    redisCpuUs: Math.round(((r * 1e6) / done) * 10) / 10,
    scriptsPerPair: Math.round(((s1.scripts - s0.scripts) / done) * 100) / 100,
    commandsPerPair: Math.round(((s1.commands - s0.commands) / done) * 10) / 10,
    heapAfterMb: Math.round(process.memoryUsage().heapUsed / 1e5) / 10,
  };
}

function event(h: Hold, now: number): Parameters<RedisStore['settle']>[1]['event'] {
  return {
    eventId: h.id,
    createdAt: new Date(now).toISOString(),
    account: h.account,
    apiKey: h.key,
    taskType: null,
    endpoint: 'chat.completions',
    requestedModel: 'm',
    servedModel: 'm',
    upstream: 't',
    fallback: false,
    fallbackReason: null,
    status: 200,
    errorCode: null,
    stream: false,
    inputTokens: 40,
    outputTokens: 40,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costNano: 3000,
    feeNano: feeShareNano(3000),
    latencyMs: 1,
    ttftMs: 1,
  };
}

/** Per call, then leases, then per call and leases again (the second pair shows the noise of the machine). */
export async function leaseBench(pairs = PAIRS): Promise<LeaseFigures[]> {
  const server = await redis();
  try {
    const out: LeaseFigures[] = [];
    for (const on of [false, true, false, true]) out.push(await run(server, on, pairs));
    return out;
  } finally {
    await server.stop();
  }
}

export function leaseTable(rows: LeaseFigures[]): string {
  const head =
    '| store | admit+settle pairs/s | gateway CPU per pair (µs) | redis-server CPU per pair (µs) | scripts per pair | Redis commands per pair |\n| --- | --- | --- | --- | --- | --- |';
  return [head, ...rows.map((r) => `| ${r.mode} | ${r.pairsPerSec} | ${r.gatewayCpuUs} | ${r.redisCpuUs} | ${r.scriptsPerPair} | ${r.commandsPerPair} |`)].join(
    '\n',
  );
}

export interface LiveLeaseFigure {
  leases: number;
  redisCpuUs: number;
}

/**
 * A flush of one leased settle while the account holds many leases (one per key, as many busy keys would): the
 * Redis CPU per flush. Each lease script reads the account's live leases, so this is how that read grows.
 */
export async function flushWithLeases(quick: boolean): Promise<LiveLeaseFigure[]> {
  const server = await redis();
  try {
    const out: LiveLeaseFigure[] = [];
    for (const leases of quick ? [1, 300] : [1, 100, 1000]) out.push(await livePoint(server, leases, quick ? 300 : 1500));
    return out;
  } finally {
    await server.stop();
  }
}

async function livePoint(server: Proc, leases: number, ms: number): Promise<LiveLeaseFigure> {
  // Leases that outlive the measurement; flushes only when asked.
  const store = await RedisStore.connect({ url: `redis://127.0.0.1:${server.port}`, prefix: `live-${leases}`, leases: { flushMs: 3_600_000, lifeMs: 60_000 } });
  try {
    const acct = account({ trialCreditNano: 1e15 });
    const keys = Array.from({ length: leases }, (_, i) => keyRec({ name: `k${i}`, hash: i.toString(16).padStart(64, '0') }));
    await store.applyConfig(snapshot([acct]), keys);
    const now = Date.now();
    let seq = 0;
    for (const key of keys) {
      const d = await store.admit({ eventId: `g-${++seq}`, key, account: acct, tokens: 10, holdNano: 100, now });
      if (!d.ok || d.hold.lease === undefined) throw new Error('the live-leases bench expected a lease for every key');
    }
    const key = keys[0] as (typeof keys)[number];
    const r0 = cpuSeconds(server.pid);
    const t0 = performance.now();
    let flushes = 0;
    while (flushes < 20 || performance.now() - t0 < ms) {
      const d = await store.admit({ eventId: `f-${++seq}`, key, account: acct, tokens: 10, holdNano: 100, now: now + 1 });
      if (!d.ok) throw new Error(`refused: ${d.code}`);
      await store.settle(d.hold, { costNano: 50, tokens: 10, event: event(d.hold, now) });
      await store.leases?.flushAll();
      flushes++;
    }
    return { leases, redisCpuUs: ((cpuSeconds(server.pid) - r0) * 1e6) / flushes };
  } finally {
    await store.close();
  }
}

export function liveLeaseTable(rows: LiveLeaseFigure[]): string {
  const head = '| leases live in the account | redis-server CPU per flush of one settle (µs) |\n| --- | --- |';
  return [head, ...rows.map((r) => `| ${r.leases.toLocaleString('en-US')} | ${Math.round(r.redisCpuUs)} |`)].join('\n');
}
