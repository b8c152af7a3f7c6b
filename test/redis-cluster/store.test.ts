// The shared Store suite on a real 3-master, 3-replica Redis Cluster: every script touches one hash slot (a
// Cluster refuses anything else with CROSSSLOT), and config, key records, revocations and the streams' registry,
// which live in other slots, work with single-key commands.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishSnapshot, readCurrentVersion } from '../../gateway/contract/config-channel.ts';
import { RedisConfigSource } from '../../gateway/config/redis-config-source.ts';
import { createRedis, isCluster, scanAll } from '../../gateway/state/redis-connect.ts';
import { redisOptionsFromEnv } from '../../gateway/state/redis-env.ts';
import { BATCH } from '../../gateway/state/config-writer.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { storeSuite } from '../../gateway/state/store-suite.ts';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-cluster.ts';

let cluster: TestRedisCluster;
let n = 0;

beforeAll(async () => {
  cluster = await startRedisCluster('cstore');
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
});

const connect = (prefix: string, over: { holdTtlMs?: number } = {}): Promise<RedisStore> =>
  RedisStore.connect({ ...redisOptionsFromEnv(cluster.url, { SVC_REDIS_CLUSTER: '1' }), prefix, ...over });

storeSuite('RedisStore on a Redis Cluster', async (timing) => {
  const store = await connect(`${cluster.prefix}-${++n}`, timing);
  expect(isCluster(store.redis)).toBe(true);
  return {
    store,
    events: (account) => store.usageEvents(account),
    // Every node of this test Cluster runs on one machine, so any node's TIME is the clock admit.lua reads.
    clock: async () => {
      const [sec, usec] = await store.redis.time();
      return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    },
    close: () => store.close(),
  };
});

describe('RedisStore on a Redis Cluster', () => {
  it('spreads accounts over the masters and keeps each account in one slot', async () => {
    const prefix = `${cluster.prefix}-spread`;
    const store = await connect(prefix);
    try {
      const accounts = Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [`acct${i}`, { name: `acct${i}`, plan: 'p', trialCreditNano: 1000, credits: [{ id: 'c1', amountNano: 5 }] }]),
      );
      await store.applyConfig({ schema: 1, version: 'v1', plans: {}, models: {}, accounts }, []);
      const ports = new Set<number>();
      for (const a of Object.keys(accounts)) {
        ports.add((await cluster.masterOf(`${prefix}:{a:${a}}:acct`)).port);
        expect((await store.ledger(a)).creditedNano).toBe(1005);
      }
      // The operator's spend refresh: one pipeline per account (both keys in its slot), many accounts at once.
      const spends = await Promise.all(Object.keys(accounts).map((a) => store.monthSpend(a, ['k1'], '2026-11')));
      expect(spends.map((s) => s.creditedNano)).toEqual(Object.keys(accounts).map(() => 1005));
      expect(ports.size).toBeGreaterThan(1);
      expect((await cluster.client.smembers(`${prefix}:usage:streams`)).length).toBe(12);
      expect((await scanAll(cluster.client, `${prefix}:*`)).length).toBeGreaterThan(12);
    } finally {
      await store.close();
    }
  });

  it('writes a config of more keys than one slice, records and accounts on every master, as one at a time would', async () => {
    const prefix = `${cluster.prefix}-slices`;
    const store = await connect(prefix);
    try {
      const accounts = Object.fromEntries(
        Array.from({ length: 24 }, (_, i) => [`a${i}`, { name: `a${i}`, plan: 'p', trialCreditNano: 100, credits: [{ id: 'c1', amountNano: 5 }] }]),
      );
      const keys = Array.from({ length: 2 * BATCH + 37 }, (_, i) => ({
        hash: i.toString(16).padStart(64, '0'),
        name: `k${i}`,
        display: 'sk-svc-…abcd',
        account: `a${i % 24}`,
        monthlyBudgetNano: null,
        rpm: i,
        tpm: null,
        models: null,
        revoked: i % 4 === 0,
      }));
      const snap = { schema: 1, version: 'v1', plans: {}, models: {}, accounts } as const;
      // A node that forgot its scripts (a restart) is taught them on the way.
      for (const node of cluster.client.nodes('master')) await node.script('FLUSH');
      await store.applyConfig(snap, keys);
      await store.applyConfig(snap, keys);
      const ports = new Set<number>();
      for (const k of [keys[0], keys[1], keys[BATCH], keys[BATCH + 1], keys[keys.length - 1], keys[keys.length - 2]]) {
        if (!k) continue;
        ports.add((await cluster.masterOf(`${prefix}:key:${k.hash}`)).port);
        expect(await store.findKey(k.hash)).toMatchObject({ name: k.name, rpm: k.rpm, revoked: k.revoked });
      }
      expect(ports.size).toBeGreaterThan(1);
      for (const a of Object.keys(accounts)) expect((await store.ledger(a)).creditedNano).toBe(105);
      // A stale writer sends every key active and half of them gone: the revoked stay revoked, the gone are removed.
      const kept = keys.slice(0, BATCH).map((k) => ({ ...k, revoked: false }));
      await store.applyConfig(snap, kept);
      expect(await store.findKey(keys[4]?.hash ?? '')).toMatchObject({ revoked: true });
      expect(await store.findKey(keys[5]?.hash ?? '')).toMatchObject({ revoked: false });
      expect(await store.findKey(keys[BATCH + 1]?.hash ?? '')).toBeNull();
      expect(await store.findKey(keys[BATCH + 4]?.hash ?? '')).toMatchObject({ revoked: true });
      expect(await cluster.client.scard(`${prefix}:keys`)).toBe(BATCH + Math.ceil((keys.length - BATCH) / 4));
    } finally {
      await store.close();
    }
  });

  it('publishes key records, revocations and config across slots; a gateway reads the announced snapshot', async () => {
    const prefix = `${cluster.prefix}-cfg`;
    const store = await connect(prefix);
    const sub = createRedis({ url: cluster.url, cluster: true });
    const warnings: string[] = [];
    const source = new RedisConfigSource({
      redis: store.redis,
      subscriber: sub,
      prefix,
      pollMs: 60_000,
      log: { info: () => {}, warn: (m) => warnings.push(m) },
    });
    try {
      const acct = { name: 'acme', plan: 'p', trialCreditNano: 1000, credits: [] };
      const key = {
        hash: 'cd'.repeat(32),
        name: 'k1',
        display: 'sk-svc-…abcd',
        account: 'acme',
        monthlyBudgetNano: null,
        rpm: null,
        tpm: null,
        models: null,
        revoked: false,
      };
      const snap1 = { schema: 1, version: 'v1', plans: {}, models: {}, accounts: { acme: acct } } as const;
      await store.applyConfig(snap1, [key]);
      await publishSnapshot(store.redis, prefix, snap1);
      await source.start();
      expect(source.version()).toBe('v1');
      expect(await store.findKey(key.hash)).toMatchObject({ name: 'k1', revoked: false });
      for (let i = 2; i <= 13; i++) await publishSnapshot(store.redis, prefix, { ...snap1, version: `v${i}` });
      expect(await readCurrentVersion(store.redis, prefix)).toBe('v13');
      const end = Date.now() + 5000;
      while (source.version() !== 'v13' && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(source.version()).toBe('v13');
      // Old snapshots trimmed one key at a time.
      expect(await scanAll(cluster.client, `${prefix}:config:snapshots:*`)).toHaveLength(10);
      await store.revoke(key.hash);
      expect(await store.findKey(key.hash)).toMatchObject({ revoked: true });
      const admit = await store.admit({ eventId: 'e1', key: { ...key, revoked: false }, account: acct, tokens: 1, holdNano: 1, now: Date.now() });
      expect(admit).toMatchObject({ ok: false });
      expect(warnings).toEqual([]);
    } finally {
      await source.close();
      await store.close();
    }
  });
});
