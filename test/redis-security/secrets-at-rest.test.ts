// Reliability case 17 for Redis: no upstream credential (and no API key) in clear anywhere in the keyspace. Real
// gateways publish manifests whose ModelRoute takes its provider key from a Secret, serve calls with it (the fake
// upstream sees it), and then every key of the whole keyspace (SCAN on every master) is read by its type (GET,
// HGETALL, LRANGE, SMEMBERS, ZRANGE, XRANGE) and searched for the secret values: 0 hits, on one Redis and on a Redis
// Cluster. A cluster-mode gateway serves with what the operator's path publishes; key rotation keeps both keys valid.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClusterGateway } from '../../gateway/cluster-mode.ts';
import { RedisConfigSource } from '../../gateway/config/redis-config-source.ts';
import { loadStandaloneConfig } from '../../gateway/config/standalone.ts';
import { publishSnapshot } from '../../gateway/contract/config-channel.ts';
import { keyringFromEnv } from '../../gateway/contract/sealed-credentials.ts';
import { createRedis, type RedisClient } from '../../gateway/state/redis-connect.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { chat, FLEET_PEPPER, startFleet, writeManifests, type FleetRedis } from '../helpers/fleet.ts';
import { account, apiKey, plan, route, secret } from '../helpers/manifests.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { keyspaceText } from '../helpers/keyspace.ts';
import { until } from '../helpers/until.ts';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-cluster.ts';

const CANARY = `sk-canary-${randomBytes(16).toString('hex')}`;
/** A cloud credential read as a whole Secret (an Azure service principal's client secret): sealed the same way. */
const SP_CANARY = `sp-canary-${randomBytes(16).toString('hex')}`;
const key = apiKey('k1', 'acme');
const KEY_BODY = key.key.slice('sk-svc-'.length);
let up: FakeUpstream;
let single: TestRedis;
let cluster: TestRedisCluster;

function docs(): object[] {
  return [
    plan('builder', { tier: 2 }),
    account('acme', 'builder', { trialCreditUsd: 5 }),
    ...key.docs,
    secret('upstream-cred', { apiKey: CANARY }),
    // The response cache on: its entries are in the keyspace searched too.
    route('gpt-x', [{ name: 'up', provider: 'openai', baseUrl: up.baseUrl, credentials: { secretKeyRef: { name: 'upstream-cred', key: 'apiKey' } } }], {
      cache: {},
    }),
    secret('azure-sp', { AZURE_TENANT_ID: 'tenant', AZURE_CLIENT_ID: 'client', AZURE_CLIENT_SECRET: SP_CANARY }),
    route('gpt-az', [
      { name: 'az', provider: 'azure-openai', baseUrl: up.url, upstreamModel: 'deployment', credentials: { secretKeyRef: { name: 'azure-sp' } } },
    ]),
  ];
}

const hits = (text: string, needle: string): number => text.split(needle).length - 1;

beforeAll(async () => {
  up = await startFakeUpstream('sealed');
  [single, cluster] = await Promise.all([startRedis('sealed'), startRedisCluster('sealed')]);
}, 90_000);

afterAll(async () => {
  await Promise.all([single?.stop(), cluster?.stop(), up?.close()]);
});

describe('no provider credential in clear in Redis', () => {
  it.each(['one Redis', 'a Redis Cluster'])("standalone gateways on %s serve with the Secret's key, and the keyspace holds it nowhere", async (where) => {
    const redis: FleetRedis = where === 'one Redis' ? { url: single.url, prefix: single.prefix } : { url: cluster.url, prefix: cluster.prefix, cluster: true };
    const client: RedisClient = where === 'one Redis' ? single.client : cluster.client;
    const fleet = await startFleet(2, redis, docs());
    try {
      const before = up.calls.length;
      const results = await Promise.all(fleet.urls.map((u) => chat(u, key.key, { model: 'gpt-x' })));
      expect(results.map((r) => r.status)).toEqual([200, 200]);
      expect(up.calls.slice(before).map((c) => c.headers.authorization)).toEqual([`Bearer ${CANARY}`, `Bearer ${CANARY}`]);
      // A cacheable call stored by one gateway is a hit on the other (its settle and the write come after the answer).
      const cacheable = { model: 'gpt-x', temperature: 0, messages: [{ role: 'user', content: `cached in ${where}` }] };
      expect((await chat(fleet.urls[0] as string, key.key, cacheable)).status).toBe(200);
      const hitOn = async (url: string): Promise<string | null> => {
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ max_tokens: 50, ...cacheable }),
        });
        await res.text();
        return res.headers.get('x-svc-cache');
      };
      await until(async () => (await hitOn(fleet.urls[1] as string)) === 'hit', 5000, 'a hit on the other gateway');
    } finally {
      await fleet.stop();
    }
    const { keys, text } = await keyspaceText(client, redis.prefix);
    console.log(`${where}: ${keys} keys scanned; upstream credential found ${hits(text, CANARY)} times, API key ${hits(text, KEY_BODY)} times`);
    expect(keys).toBeGreaterThan(10);
    expect(text).toContain('svc-sealed:v1:');
    expect(text).toContain(':{a:acme}:cache');
    expect(hits(text, CANARY)).toBe(0);
    expect(hits(text, SP_CANARY)).toBe(0);
    expect(hits(text, KEY_BODY)).toBe(0);
  });

  it("a cluster-mode gateway on the Cluster serves with what the operator's path publishes (sealed), and nothing is in clear", async () => {
    const prefix = `${cluster.prefix}-op`;
    const env = { SVC_KEY_PEPPER: FLEET_PEPPER, SVC_CONFIG_KEY: randomBytes(32).toString('hex') };
    const config = loadStandaloneConfig(writeManifests(docs()), FLEET_PEPPER);
    const op = await RedisStore.connect({ url: cluster.url, cluster: true, prefix, keyring: keyringFromEnv(env) });
    const gw = await startClusterGateway(
      {
        ...env,
        REDIS_URL: cluster.url,
        SVC_REDIS_CLUSTER: '1',
        SVC_REDIS_PREFIX: prefix,
        HOST: '127.0.0.1',
        SVC_METRICS_PORT: '0',
        SVC_DRAIN_SECONDS: '0',
        LOG_LEVEL: 'warn',
      },
      0,
    );
    try {
      // What ConfigController.reconcile does.
      await op.applyConfig(config.snapshot, config.keys);
      await publishSnapshot(op.redis, prefix, op.seal(config.snapshot));
      const end = Date.now() + 10_000;
      while ((await fetch(`${gw.address}/readyz`)).status !== 200 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      const before = up.calls.length;
      expect((await chat(gw.address, key.key, { model: 'gpt-x' })).status).toBe(200);
      expect(up.calls[before]?.headers.authorization).toBe(`Bearer ${CANARY}`);
      const { text } = await keyspaceText(cluster.client, prefix);
      expect(hits(text, CANARY)).toBe(0);
      expect(hits(text, SP_CANARY)).toBe(0);
    } finally {
      await gw.stop();
      await op.close();
    }
  });

  it('rotates SVC_CONFIG_KEY: gateways on "new,old" read snapshots sealed with either; one without the key keeps its last good config', async () => {
    const prefix = `${single.prefix}-rot`;
    const [oldKey, newKey] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
    const config = loadStandaloneConfig(writeManifests(docs()), FLEET_PEPPER);
    const publish = async (keys: string, version: string): Promise<void> => {
      const store = await RedisStore.connect({ url: single.url, prefix, keyring: keyringFromEnv({ SVC_CONFIG_KEY: keys }) });
      await publishSnapshot(store.redis, prefix, store.seal({ ...config.snapshot, version }));
      await store.close();
    };
    const source = (keys: string, warnings: string[]): RedisConfigSource =>
      new RedisConfigSource({
        redis: single.client,
        subscriber: createRedis({ url: single.url }),
        prefix,
        keyring: keyringFromEnv({ SVC_CONFIG_KEY: keys }),
        pollMs: 100,
        log: { info: () => {}, warn: (m) => warnings.push(m) },
      });
    const credential = (s: RedisConfigSource): unknown => s.current().models['gpt-x']?.targets[0]?.credential;
    const wBoth: string[] = [];
    const wOld: string[] = [];
    const both = source(`${newKey},${oldKey}`, wBoth);
    const onlyOld = source(oldKey, wOld);
    try {
      await publish(oldKey, 'r1'); // step 0: everything on the old key
      await both.start();
      await onlyOld.start();
      expect(credential(both)).toEqual({ kind: 'value', value: CANARY });
      expect(credential(onlyOld)).toEqual({ kind: 'value', value: CANARY });
      await publish(`${newKey},${oldKey}`, 'r2'); // step 2: the publisher seals with the new key
      const end = Date.now() + 5000;
      while ((both.version() !== 'r2' || wOld.length === 0) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(both.version()).toBe('r2');
      expect(credential(both)).toEqual({ kind: 'value', value: CANARY });
      // A gateway left on the old key alone refuses r2 with a reason and keeps serving r1.
      expect(onlyOld.version()).toBe('r1');
      expect(wOld.join('\n')).toMatch(
        /Ignored config version r2: the credential of (gpt-x\/up|gpt-az\/az) is sealed with key [0-9a-f]{8}, which is not in SVC_CONFIG_KEY/,
      );
      expect(wBoth).toEqual([]);
    } finally {
      await both.close();
      await onlyOld.close();
    }
  });
});
