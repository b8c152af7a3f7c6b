// Redis over TLS with ACL users, on a real redis-server that only speaks TLS (certificates made by the test with
// openssl; every client must show a certificate signed by the test CA) and takes its users from an ACL file holding
// the least-privilege rules of gateway/state/redis-acl.ts. The operator's user publishes, the gateway's user serves
// real traffic (cluster-mode gateway, HTTP calls), the exporter's user exports; each is refused what it must not do.
// And the money paths outside plain traffic, each under its process's user: leased admission (gateway), a rebuild's
// staged restore and the settle of events an exporter committed after a rebuild (operator); the exporter may not.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandaloneConfig } from '../../gateway/config/standalone.ts';
import { startClusterGateway, type ClusterGateway } from '../../gateway/cluster-mode.ts';
import { publishSnapshot } from '../../gateway/contract/config-channel.ts';
import { aclUser } from '../../gateway/state/redis-acl.ts';
import { connectRedis, type RedisClient } from '../../gateway/state/redis-connect.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { restoreAccounts, SettledStage } from '../../gateway/state/money-restore.ts';
import { LateSweep } from '../../gateway/state/late-sweep.ts';
import type { MoneyRecord } from '../../gateway/state/money-record.ts';
import { held, usage } from '../../gateway/state/store-suite-fixtures.ts';
import { UsageStreams } from '../../gateway/usage/exporter/streams.ts';
import { maintain } from '../../gateway/usage/exporter/maintain.ts';
import { ExporterMetrics } from '../../gateway/usage/exporter/metrics.ts';
import { Registry } from 'prom-client';
import { setup } from '../billing/fixtures.ts';
import { chat, me, writeManifests } from '../helpers/fleet.ts';
import { startSecureRedis, type SecureRedis } from '../helpers/redis-secure.ts';
import { until } from '../helpers/until.ts';
import { settled } from '../helpers/settled.ts';

const PEPPER = 'tls-acl-test-pepper';
const pw = {
  admin: randomBytes(12).toString('hex'),
  gateway: randomBytes(12).toString('hex'),
  operator: randomBytes(12).toString('hex'),
  exporter: randomBytes(12).toString('hex'),
};
let redis: SecureRedis;
let tlsEnv: Record<string, string>;
const base = setup([{ name: 'acme', spec: { trialCreditUsd: 5, credits: [{ id: 'c1', amountUsd: 1 }] } }], [{ name: 'k1', account: 'acme' }]);
// The response cache on for mock-fast: its scripts run under the gateway's ACL user too.
const s = {
  ...base,
  docs: base.docs.map((d) => {
    const o = d as { kind?: string; metadata?: { name?: string }; spec?: Record<string, unknown> };
    return o.kind === 'ModelRoute' && o.metadata?.name === 'mock-fast' ? { ...o, spec: { ...o.spec, cache: {} } } : d;
  }),
};

beforeAll(async () => {
  redis = await startSecureRedis(
    [
      `user default off`,
      `user admin on >${pw.admin} ~* &* +@all`,
      aclUser('svc-gateway', pw.gateway, 'gateway'),
      aclUser('svc-operator', pw.operator, 'operator'),
      aclUser('svc-exporter', pw.exporter, 'exporter'),
    ],
    { clientCerts: true },
  );
  tlsEnv = { SVC_REDIS_CA_FILE: redis.certs.ca, SVC_REDIS_CERT_FILE: redis.certs.clientCert, SVC_REDIS_KEY_FILE: redis.certs.clientKey };
}, 60_000);

afterAll(async () => {
  await redis?.stop();
});

const conn = (user: keyof typeof pw, over: Record<string, string | undefined> = {}): { url: string; caFile?: string; certFile?: string; keyFile?: string } => ({
  url: redis.url(user === 'gateway' || user === 'operator' || user === 'exporter' ? `svc-${user}` : user, pw[user]),
  caFile: over.ca ?? redis.certs.ca,
  certFile: over.cert ?? redis.certs.clientCert,
  keyFile: over.key ?? redis.certs.clientKey,
});

async function refused(client: RedisClient, ...cmd: [string, ...Array<string | number>]): Promise<void> {
  await expect(client.call(...cmd), cmd.join(' ')).rejects.toThrow(/NOPERM|DEBUG command not allowed/);
}

describe('Redis over TLS with ACL users', () => {
  it('refuses a client without the CA, without a client certificate, or with a wrong password', async () => {
    await expect(connectRedis({ ...conn('admin'), caFile: undefined }, { connectTimeout: 2000, retryDelayMs: () => 60_000 })).rejects.toThrow(/certificate/i);
    await expect(
      connectRedis({ ...conn('admin'), certFile: undefined, keyFile: undefined }, { connectTimeout: 2000, retryDelayMs: () => 60_000 }),
    ).rejects.toThrow();
    await expect(
      connectRedis({ ...conn('admin'), url: redis.url('svc-gateway', 'wrong') }, { connectTimeout: 2000, retryDelayMs: () => 60_000 }),
    ).rejects.toThrow(/WRONGPASS|invalid/i);
    const ok = await connectRedis(conn('admin'));
    expect(await ok.ping()).toBe('PONG');
    ok.disconnect();
  });

  it('the operator publishes with its user; the gateway serves traffic with its own; the exporter exports with its own', async () => {
    const config = loadStandaloneConfig(writeManifests(s.docs), PEPPER);
    const op = await RedisStore.connect(conn('operator'));
    let gw: ClusterGateway | undefined;
    try {
      await op.applyConfig(config.snapshot, config.keys);
      await publishSnapshot(op.redis, op.prefix, config.snapshot);
      await op.revoke('ff'.repeat(32));
      await refused(op.redis, 'FLUSHALL');
      await refused(op.redis, 'CONFIG', 'GET', 'maxmemory');
      await refused(op.redis, 'KEYS', '*');
      await refused(op.redis, 'GET', 'elsewhere');

      gw = await startClusterGateway(
        {
          REDIS_URL: redis.url('svc-gateway', pw.gateway),
          ...tlsEnv,
          SVC_KEY_PEPPER: PEPPER,
          HOST: '127.0.0.1',
          SVC_METRICS_PORT: '0',
          SVC_DRAIN_SECONDS: '0',
          LOG_LEVEL: 'warn',
        },
        0,
      );
      const url = gw.address;
      const end = Date.now() + 10_000;
      while ((await fetch(`${url}/readyz`)).status !== 200 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      const key = s.keys.k1 as string;
      const calls = await Promise.all(Array.from({ length: 10 }, () => chat(url, key)));
      if (calls.some((c) => c.status !== 200)) {
        const admin = await connectRedis(conn('admin'));
        const log = await admin.call('ACL', 'LOG', '5');
        admin.disconnect();
        throw new Error(`gateway calls failed: ${calls[0]?.body}; ACL LOG: ${JSON.stringify(log)}`);
      }
      expect((await me(url, key)).status).toBe(200);
      // The response cache reads and writes with the gateway's user: a repeated cacheable call becomes a hit.
      let cacheCalls = 0;
      const cacheState = async (): Promise<string | null> => {
        cacheCalls++;
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mock-fast', temperature: 0, messages: [{ role: 'user', content: 'cache under ACL' }] }),
        });
        await res.text();
        return res.headers.get('x-svc-cache');
      };
      expect(await cacheState()).toBe('miss');
      await until(async () => (await cacheState()) === 'hit', 5000, 'a cache hit under the ACL user');
      // What the gateway's user must not do.
      const g = await RedisStore.connect(conn('gateway'));
      try {
        for (const cmd of [
          ['FLUSHALL'],
          ['FLUSHDB'],
          ['CONFIG', 'GET', 'maxmemory'],
          ['KEYS', '*'],
          ['SCAN', '0'],
          ['DEBUG', 'SLEEP', '0'],
          ['SHUTDOWN'],
          ['SET', 'svc:config:current', 'x'],
          ['HSET', `svc:key:${'ab'.repeat(32)}`, 'revoked', '0'],
          ['SREM', 'svc:keys', 'x'],
          ['GET', 'elsewhere'],
        ] as Array<[string, ...string[]]>) {
          await refused(g.redis, ...cmd);
        }
      } finally {
        await g.close();
      }
      const admin = await RedisStore.connect(conn('admin'));
      try {
        await settled(admin, 'acme', { tries: 100 });
        expect(await admin.ledger('acme')).toMatchObject({ openHolds: 0, heldNano: 0 });
        expect((await admin.ledger('acme')).spentNano).toBeGreaterThan(0);
      } finally {
        await admin.close();
      }
      // The operator's spend refresh of status reads this month's spend with its user (its leader also writes it back
      // when it rebuilds a Redis that lost its data; and releases the holds of settles a promoted replica missed, when it
      // catches one up), and cannot touch the rate windows or usage.
      const spend = await op.monthSpend('acme', ['k1'], new Date().toISOString().slice(0, 7));
      expect(spend.keyMonthNano.k1).toBeGreaterThan(0);
      expect(spend.accountMonthNano).toBeGreaterThanOrEqual(spend.keyMonthNano.k1 as number);
      await refused(op.redis, 'HSET', 'svc:{a:acme}:tpmn:k1', 'x', '1');
      await refused(op.redis, 'XADD', 'svc:{a:acme}:usage', '*', 'v', '1');

      const ex = await connectRedis(conn('exporter'));
      try {
        const streams = new UsageStreams(ex, 'svc', 'exporter-1');
        expect(await streams.discover()).toBe(1);
        const entries = await streams.readNew(100);
        expect(entries.length).toBe(10 + cacheCalls);
        expect(await streams.ack(entries)).toBe(10 + cacheCalls);
        await maintain(streams, new ExporterMetrics(new Registry()), Date.now());
        expect(await ex.get('svc:config:snapshot')).not.toBeNull();
        expect(await ex.smembers('svc:{a:acme}:credits')).toEqual(['c1']);
        await refused(ex, 'SET', 'svc:config:snapshot', 'x');
        await refused(ex, 'HMGET', `svc:key:${'ab'.repeat(32)}`, 'record');
        // It reads an account's money (the reconciliation), never writes it (events it commits after a rebuild are
        // settled by the operator), nor its keys' limits, revocations or credits, and runs no script.
        expect(await ex.hget('svc:{a:acme}:acct', 'spent')).not.toBeNull();
        await refused(ex, 'HINCRBY', 'svc:{a:acme}:acct', 'spent', '1');
        await refused(ex, 'ZADD', 'svc:{a:acme}:settled', '1', 'x');
        await refused(ex, 'EVAL', 'return 1', '0');
        await refused(ex, 'HSET', 'svc:{a:acme}:tpmn:k1', 'x', '1');
        await refused(ex, 'SADD', 'svc:{a:acme}:revoked', 'x');
        await refused(ex, 'SADD', 'svc:{a:acme}:credits', 'x');
        await refused(ex, 'FLUSHALL');
      } finally {
        ex.disconnect();
      }
    } finally {
      await gw?.stop();
      await op.close();
    }
  });

  it("under their own users: leased admission (gateway), a rebuild's staged restore and late settles (operator)", async () => {
    const config = loadStandaloneConfig(writeManifests(s.docs), PEPPER);
    const op = await RedisStore.connect(conn('operator'));
    const gw = await RedisStore.connect({ ...conn('gateway'), leases: { flushMs: 3_600_000 } });
    const admin = await connectRedis(conn('admin'));
    try {
      await op.applyConfig(config.snapshot, config.keys);
      const acct = config.snapshot.accounts.acme;
      const key = config.keys.find((k) => k.name === 'k1');
      if (!acct || !key) throw new Error('acme and k1 in the config');
      // A lease granted, a settle flushed in one batch, the lease given back: lease.lua under the gateway's user.
      const now = Date.now();
      const hold = held(await gw.admit({ eventId: `acl-lease-${now}`, key, account: acct, tokens: 10, holdNano: 1000, now }));
      expect(hold.lease).toBeDefined();
      await gw.settle(hold, { costNano: 600, tokens: 10, event: usage(hold, 600, now) });
      await gw.leases?.flushAll();
      await gw.leases?.releaseAll();
      expect(await admin.zscore('svc:{a:acme}:settled', hold.id)).not.toBeNull();
      // A rebuild under the operator's user: the recent ids staged, then renamed into the settled set by the restore.
      const ids: Array<[string, number]> = [
        ['gone-1', now],
        ['gone-2', now],
        ['gone-3', now],
      ];
      const record: MoneyRecord = { account: 'gone', trialNano: 1000, creditIds: [], creditedNano: 5000, spentNano: 0, feeNano: 0, spend: {}, stripe: [] };
      const stage = new SettledStage(op.redis, 'svc');
      await stage.add('gone', ids);
      expect(await restoreAccounts(op.redis, 'svc', [record], stage)).toBe(1);
      expect(await admin.zcard('svc:{a:gone}:settled')).toBe(3);
      // An event an exporter committed after that rebuild had read the ledger, queued, settled by the operator's sweep.
      const month = new Date(now).toISOString().slice(0, 7);
      let queue = [
        {
          account: 'gone',
          eventId: 'late-1',
          month,
          keyName: 'k9',
          costNano: '700',
          feeNano: '0',
          cacheHit: false,
          savedNano: '0',
          atMs: now,
          queuedAtMs: now,
        },
      ];
      const quiet = { info: () => {}, warn: () => {}, error: () => {} };
      const sweep = new LateSweep({
        redis: op.redis,
        prefix: 'svc',
        queue: { take: async () => queue, done: async (done) => void (queue = queue.filter((e) => !done.includes(e.eventId))) },
        log: quiet,
      });
      expect(await sweep.sweep()).toEqual({ events: 1, nano: 700, waiting: 0, gaveUp: 0 });
      expect(queue).toEqual([]);
      expect(await admin.hget('svc:{a:gone}:acct', 'spent')).toBe('700');
    } finally {
      admin.disconnect();
      await gw.close();
      await op.close();
    }
  });
});
