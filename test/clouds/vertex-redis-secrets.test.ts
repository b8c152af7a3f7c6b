// Google credentials at rest: gateways on Redis serve Vertex targets with a service-account key from a Secret and with
// ambient (GKE metadata) credentials, then every key of the keyspace is read and searched: the private key, the
// access tokens the fake token endpoint and metadata server issued, none of them is there in clear (the Secret's data
// is sealed like any upstream key; tokens live only in the gateway's memory).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeMetadata, type FakeMetadata } from '../fakes/google/metadata.ts';
import { makeServiceAccount, startFakeOAuth, type FakeOAuth } from '../fakes/google/oauth.ts';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/vertex.ts';
import { chat, startFleet } from '../helpers/fleet.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { scanAll } from '../../gateway/state/redis-connect.ts';

let redis: TestRedis;
let metadata: FakeMetadata;
let oauth: FakeOAuth;
let google: FakeGoogle;
const sa = makeServiceAccount('proj-1');
const b = basics();

beforeAll(async () => {
  [redis, metadata, oauth] = await Promise.all([startRedis('vertex-sealed'), startFakeMetadata(), startFakeOAuth([sa])]);
  google = await startFakeGoogle({ bearer: (t) => metadata.valid(t) || oauth.valid(t), apiKeys: new Set() });
}, 90_000);

afterAll(async () => {
  await Promise.all([redis?.stop(), metadata?.close(), oauth?.close(), google?.close()]);
});

it('keeps no service-account key and no Google token in clear in Redis', async () => {
  const target = { provider: 'vertex' as const, region: 'us-east5', project: 'proj-1', baseUrl: google.url, upstreamModel: 'claude-sonnet-4@20250514' };
  const fleet = await startFleet(
    1,
    { url: redis.url, prefix: redis.prefix },
    [
      ...b.docs,
      secret('vertex-sa', { 'service-account.json': sa.json }),
      route('claude-sa', [{ name: 'sa', ...target, credentials: { secretKeyRef: { name: 'vertex-sa' } } }]),
      route('claude-gke', [{ name: 'gke', ...target, credentials: { ambient: {} } }]),
    ],
    { GCE_METADATA_HOST: metadata.host, HTTPS_PROXY: oauth.proxyUrl, NO_PROXY: '127.0.0.1,localhost', NODE_EXTRA_CA_CERTS: oauth.caFile },
  );
  try {
    for (const model of ['claude-sa', 'claude-gke']) expect((await chat(fleet.urls[0] as string, b.keys.builder, { model })).status).toBe(200);
  } finally {
    await fleet.stop();
  }
  expect(oauth.issued.length).toBeGreaterThan(0);
  expect(metadata.issued.length).toBeGreaterThan(0);
  const keys = await scanAll(redis.client, `${redis.prefix}*`);
  const parts: string[] = [];
  for (const k of keys) {
    const type = await redis.client.type(k);
    const v =
      type === 'string'
        ? await redis.client.get(k)
        : type === 'hash'
          ? await redis.client.hgetall(k)
          : type === 'list'
            ? await redis.client.lrange(k, 0, -1)
            : type === 'set'
              ? await redis.client.smembers(k)
              : type === 'zset'
                ? await redis.client.zrange(k, 0, -1)
                : type === 'stream'
                  ? await redis.client.xrange(k, '-', '+')
                  : `(type ${type})`;
    parts.push(k, JSON.stringify(v));
  }
  const text = parts.join('\n');
  expect(keys.length).toBeGreaterThan(10);
  const keyLine = (JSON.parse(sa.json) as { private_key: string }).private_key.split('\n')[1] ?? '';
  expect(keyLine.length).toBeGreaterThan(20);
  expect(text).not.toContain(keyLine);
  expect(text).not.toContain(sa.email.split('@')[0] + '@proj-1.iam');
  for (const t of [...oauth.issued, ...metadata.issued]) expect(text).not.toContain(t);
});
