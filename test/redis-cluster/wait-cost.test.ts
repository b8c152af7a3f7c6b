// What SVC_REDIS_WAIT_REPLICAS=1 costs: admit + settle pairs through RedisStore on a healthy 3-master, 3-replica
// Cluster, 32 at a time, with and without WAIT 1, interleaved rounds. Prints throughput and latency; asserts only
// that both ledgers are exact (timings are figures, not assertions).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledAccount, KeyRecord } from '../../gateway/contract/snapshot.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-cluster.ts';

let cluster: TestRedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster('waitcost');
}, 90_000);
afterAll(async () => {
  await cluster?.stop();
});

const acct: CompiledAccount = { name: 'acme', plan: 'p', trialCreditNano: 1e15, credits: [] };
const key: KeyRecord = {
  hash: 'ab'.repeat(32),
  name: 'k',
  display: 'sk-svc-…abcd',
  account: 'acme',
  monthlyBudgetNano: null,
  rpm: null,
  tpm: null,
  models: null,
  revoked: false,
};

interface Round {
  perSecond: number;
  p50: number;
  p99: number;
  /** Admissions answered 503 because no replica acknowledged them in time. */
  unacknowledged: number;
}

async function round(store: RedisStore, n: number, concurrency: number, tag: string): Promise<Round> {
  const lat: number[] = [];
  let unacknowledged = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        const d = await store.admit({ eventId: `${tag}-${i}`, key, account: acct, tokens: 10, holdNano: 1000, now: Date.now() }).catch((err: unknown) => {
          if ((err as { code?: string }).code !== 'store_unavailable') throw err;
          unacknowledged++;
          return null;
        });
        if (d === null) continue;
        if (!d.ok) throw new Error(`refused: ${JSON.stringify(d)}`);
        await store.settle(d.hold, {
          costNano: 700,
          tokens: 10,
          freeSlot: false,
          event: {
            eventId: `${tag}-${i}`,
            createdAt: new Date().toISOString(),
            account: 'acme',
            apiKey: 'k',
            taskType: null,
            endpoint: 'chat',
            requestedModel: 'm',
            servedModel: 'm',
            upstream: 'u',
            fallback: false,
            fallbackReason: null,
            status: 200,
            errorCode: null,
            stream: false,
            inputTokens: 5,
            outputTokens: 5,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
            costNano: 700,
            feeNano: 0,
            latencyMs: 1,
            ttftMs: null,
          },
        } as unknown as Parameters<RedisStore['settle']>[1]);
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return {
    unacknowledged,
    perSecond: Math.round(n / secs),
    p50: Number((lat[Math.floor(n / 2)] ?? 0).toFixed(2)),
    p99: Number((lat[Math.floor(n * 0.99)] ?? 0).toFixed(2)),
  };
}

describe('the cost of WAIT 1 on money-changing scripts', () => {
  it('measures admit+settle throughput with and without it', async () => {
    const stores = {
      async: await RedisStore.connect({ url: cluster.url, cluster: true, prefix: `${cluster.prefix}-a` }),
      wait1: await RedisStore.connect({ url: cluster.url, cluster: true, prefix: `${cluster.prefix}-w`, waitReplicas: 1, waitTimeoutMs: 200 }),
    };
    try {
      for (const st of Object.values(stores)) await st.applyConfig({ schema: 1, version: 'v', plans: {}, models: {}, accounts: { acme: acct } }, [key]);
      const out: Record<string, Round[]> = { async: [], wait1: [] };
      for (let r = 0; r < 3; r++) {
        for (const [name, st] of Object.entries(stores)) out[name]?.push(await round(st, 1000, 32, `${name}-${r}`));
      }
      const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
      const summary = Object.fromEntries(
        Object.entries(out).map(([k, v]) => [
          k,
          {
            pairsPerSecond: median(v.map((x) => x.perSecond)),
            p50Ms: median(v.map((x) => x.p50)),
            p99Ms: median(v.map((x) => x.p99)),
            unacknowledged: v.reduce((a, x) => a + x.unacknowledged, 0),
          },
        ]),
      );
      console.log(`admit+settle pairs on a 3x2 Cluster, 32 concurrent, median of 3 rounds of 1000: ${JSON.stringify(summary)}`);
      expect((await stores.async.ledger('acme')).spentNano).toBe(3 * 1000 * 700);
      // An admission refused for want of an acknowledgement keeps its hold until the hold TTL (fail closed).
      const unacked = summary.wait1?.unacknowledged ?? 0;
      expect((await stores.wait1.ledger('acme')).spentNano).toBe((3 * 1000 - unacked) * 700);
    } finally {
      await Promise.all(Object.values(stores).map((st) => st.close()));
    }
  }, 120_000);
});
