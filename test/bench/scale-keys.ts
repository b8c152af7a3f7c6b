// Cost curve: a call's CPU and latency against the number of keys in Redis (10 to 1,000,000). One gateway process on
// one redis-server; the keys are written into Redis beside the gateway's own (as keys made in the console are: in
// Redis, not in the process's config), all on the bench's account, so the account's revocation and expiry sets grow
// with them. Calls use the gateway's key; the gateway's and redis-server's memory are read at each point.
import { redisKeys } from '../../gateway/contract/redis-keys.ts';
import type { KeyRecord } from '../../gateway/contract/snapshot.ts';
import { BATCH, ConfigWriter } from '../../gateway/state/config-writer.ts';
import { inParallel } from '../../gateway/state/parallel.ts';
import { slices } from '../../gateway/state/pipelined.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import type { Call } from './load.ts';
import type { Proc } from './procs.ts';
import { f1, f2, load, mb, n, pointCost, pointsOf, table, type Bounds } from './scale-common.ts';
import { CHAT_PATH, gateway, redis } from './subjects.ts';

export const KEY_POINTS = [10, 1_000, 10_000, 100_000, 1_000_000];

function record(i: number): KeyRecord {
  return {
    hash: `e${i.toString(16).padStart(63, '0')}`,
    name: `scale-key-${i}`,
    display: `sk-svc-…${String(i % 10_000).padStart(4, '0')}`,
    account: 'bench',
    monthlyBudgetNano: i % 3 === 0 ? 10_000_000_000 : null,
    rpm: 600,
    tpm: 100_000,
    models: null,
    revoked: i % 50 === 0,
    expiresAt: i % 5 === 0 ? Date.UTC(2030, 0, 1) : null,
  };
}

export const CHAT = JSON.stringify({ model: 'bench-chat', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 64 });

export async function keysCurve(up: Proc, b: Bounds, log: (l: string) => void): Promise<string> {
  const before = load();
  const r = await redis();
  const s = await gateway(up, { name: 'gateway-redis', processes: 1, redis: r });
  const gw = s.procs[0] as Proc;
  const store = await RedisStore.connect({ url: `redis://127.0.0.1:${r.port}`, prefix: 'svc', commandTimeoutMs: 30_000 });
  const rows: string[][] = [];
  try {
    const writer = new ConfigWriter(store.redis, redisKeys('svc'));
    const call: Call = { urls: s.urls, path: CHAT_PATH, headers: { ...s.headers, 'content-type': 'application/json' }, body: CHAT };
    let written = 0;
    for (const target of pointsOf(KEY_POINTS, b, b.maxKeys, b.minKeys)) {
      log(`keys in Redis: writing up to ${n(target)}...`);
      const t = Date.now();
      const fresh = Array.from({ length: target - written }, (_, i) => record(written + i));
      await inParallel(slices(fresh, BATCH), 4, (slice) => writer.keys(slice, false));
      const writeS = (Date.now() - t) / 1000;
      written = target;
      log(`keys in Redis: ${n(target)} (written in ${writeS.toFixed(1)} s), measuring...`);
      const c = await pointCost([gw], call, b.pointMs);
      rows.push([n(target), f2(c.p50Ms), f2(c.p99Ms), String(Math.round(c.cpuUs)), f1(mb(gw)), f1(mb(r)), String(c.errors)]);
    }
  } finally {
    await store.close();
    await gw.stop();
    await r.stop();
  }
  const capped = b.maxKeys < (KEY_POINTS[KEY_POINTS.length - 1] as number) ? [`Stopped at ${n(b.maxKeys)} keys (--max).`] : [];
  return table(
    'A call against the number of keys in Redis',
    before,
    ['keys in Redis', 'p50 one at a time (ms)', 'p99 one at a time (ms)', 'gateway CPU per call (µs)', 'gateway RSS (MB)', 'redis-server RSS (MB)', 'errors'],
    rows,
    capped,
  );
}
