// The examples of docs/billing.md's Response cache section, as written: the ModelRoute manifest is served, and the
// curl loop prints a miss from the upstream, then a hit from the cache.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { docExample } from '../helpers/docs.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { cacheGateway, type CacheGateway } from './harness.ts';
import { cacheSetup, type CacheSetup } from './setup.ts';

let redis: TestRedis;
let gw: CacheGateway;
let s: CacheSetup;

beforeAll(async () => {
  redis = await startRedis('cache-docs');
  s = cacheSetup([parse(docExample('docs/billing.md', 'cache-route')) as object]);
  gw = await cacheGateway(redis, s.docs);
});

afterAll(async () => {
  await gw?.close();
  await redis?.stop();
});

it('serves the manifest of the docs with its cache settings, and the curl example shows a miss then a hit', async () => {
  expect(gw.snapshot.models['gpt-cached']?.cache).toEqual({ ttlSeconds: 600, maxEntryBytes: 262_144, hitCostPpm: 100_000, allowSampling: false });
  const script = docExample('docs/billing.md', 'cache-curl').replace('http://127.0.0.1:8080', gw.url);
  const out = (await promisify(execFile)('bash', ['-c', script], { env: { ...process.env, SVC_KEY: s.keys.a1 } })).stdout;
  const expected = script
    .split('\n')
    .filter((l) => l.startsWith('# x-svc-'))
    .map((l) => l.slice(2));
  expect(
    out
      .trim()
      .split(/\r?\n/)
      .map((l) => l.trim().toLowerCase()),
  ).toEqual(expected);
  const events = await gw.events('acme');
  expect(events.map((e) => e.cache)).toEqual(['miss', 'hit']);
  expect(events[1]?.costNano).toBe(Math.floor((events[0]?.costNano ?? 0) / 10));
});
