// Writing a config larger than one slice (config-writer.ts BATCH) on a real Redis: every record, credit, expiry and
// revocation lands as one command at a time would have written it, and it takes a few round trips a slice, not a few
// per key (counted on a TCP hop between the store and Redis: each burst the store sends is one round trip).
import { createConnection, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import type { KeyRecord } from '../contract/snapshot.ts';
import { BATCH } from './config-writer.ts';
import { RedisStore } from './redis-store.ts';
import { account, keyRec, request, snapshot } from './store-suite-fixtures.ts';

let redis: TestRedis;
let hop: { server: Server; url: string; bursts: () => number };

/** A loopback TCP hop to Redis that counts the bursts of bytes the store sends (the round trips it makes). */
async function countingHop(target: URL): Promise<typeof hop> {
  let bursts = 0;
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    client.on('data', (d) => {
      bursts++;
      upstream.write(d);
    });
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { server, url: `redis://127.0.0.1:${port}`, bursts: () => bursts };
}

beforeAll(async () => {
  redis = await startRedis('config-writer');
  hop = await countingHop(new URL(redis.url));
});

afterAll(async () => {
  await new Promise((resolve) => hop?.server.close(resolve));
  await redis?.stop();
});

const ACCOUNTS = ['acme', 'globex', 'initech'].map((name, i) => account({ name, trialCreditNano: 1000 * (i + 1), credits: [{ id: 'c1', amountNano: 7 }] }));
const T = Date.UTC(2026, 10, 27, 12);

/** More keys than two slices: every third revoked, every fifth with an expiry in the future. */
function manyKeys(n: number): KeyRecord[] {
  return Array.from({ length: n }, (_, i) =>
    keyRec({
      hash: i.toString(16).padStart(64, '0'),
      name: `k${i}`,
      account: ACCOUNTS[i % ACCOUNTS.length]?.name,
      revoked: i % 3 === 0,
      rpm: 60 + i,
      expiresAt: i % 5 === 0 ? Date.UTC(2030, 0, 1) : null,
    }),
  );
}

describe('RedisStore.applyConfig past one slice', () => {
  it('writes every record, credit and revocation, in a few round trips a slice', async () => {
    const keys = manyKeys(2 * BATCH + 101);
    const store = await RedisStore.connect({ url: hop.url, prefix: `${redis.prefix}-many` });
    try {
      const before = hop.bursts();
      await store.applyConfig(snapshot(ACCOUNTS), keys);
      const trips = hop.bursts() - before;
      // One command at a time made at least three round trips per key; in slices it is a few per slice.
      expect(trips).toBeLessThan(keys.length / 10);
      for (const [i, a] of ACCOUNTS.entries()) expect((await store.ledger(a.name)).creditedNano).toBe(1000 * (i + 1) + 7);
      for (const k of [keys[0], keys[1], keys[BATCH], keys[BATCH + 1], keys[keys.length - 1]] as KeyRecord[]) {
        expect(await store.findKey(k.hash)).toMatchObject({ name: k.name, rpm: k.rpm, revoked: k.revoked, expired: false });
        const acct = ACCOUNTS.find((a) => a.name === k.account) ?? account();
        expect((await store.admit(request(k, acct, T))).ok).toBe(!k.revoked);
      }
      // Applied again: credits once by id, the trial once ever.
      await store.applyConfig(snapshot(ACCOUNTS), keys);
      expect((await store.ledger('acme')).creditedNano).toBe(1007);
    } finally {
      await store.close();
    }
  });

  it('never re-activates a revoked key, removes keys gone from the config in every slice, and keeps console keys', async () => {
    const keys = manyKeys(2 * BATCH + 101);
    const store = await RedisStore.connect({ url: redis.url, prefix: `${redis.prefix}-gone` });
    try {
      await store.applyConfig(snapshot(ACCOUNTS), keys);
      const console = keyRec({ hash: 'cc'.repeat(32), name: 'made-in-console' });
      await store.publishKey(console);
      // A stale writer: every key sent as active, and the second half of them gone.
      const kept = keys.slice(0, BATCH + 50).map((k) => ({ ...k, revoked: false }));
      await store.applyConfig(snapshot(ACCOUNTS), kept);
      for (const k of keys) {
        const found = await store.findKey(k.hash);
        if (k.revoked) expect(found?.revoked).toBe(true);
        else if (kept.some((x) => x.hash === k.hash)) expect(found?.revoked).toBe(false);
        else expect(found).toBeNull();
      }
      const revokedKept = kept.find((k) => Number.parseInt(k.hash, 16) % 3 === 0) as KeyRecord;
      expect(await store.admit(request(revokedKept, ACCOUNTS[0] ?? account(), T))).toMatchObject({ ok: false, code: 'key_revoked' });
      expect((await store.findKey(console.hash))?.name).toBe('made-in-console');
    } finally {
      await store.close();
    }
  });

  it('writes a config into a Redis that has forgotten the scripts (a restart), still in a few round trips', async () => {
    const keys = manyKeys(BATCH + 10);
    const store = await RedisStore.connect({ url: hop.url, prefix: `${redis.prefix}-noscript` });
    try {
      await redis.client.script('FLUSH');
      const before = hop.bursts();
      await store.applyConfig(snapshot(ACCOUNTS), keys);
      expect(hop.bursts() - before).toBeLessThan(keys.length / 10);
      expect(await store.findKey(keys[keys.length - 1]?.hash ?? '')).toMatchObject({ name: `k${keys.length - 1}` });
      expect((await store.ledger('initech')).creditedNano).toBe(3007);
    } finally {
      await store.close();
    }
  });
});
