// Cluster mode's config source against a real Redis: not ready before the first snapshot (503, not a guess),
// swapped on announcement, healed by polling when an announcement is missed, last good kept on an unknown schema.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../test/helpers/until.ts';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import { configKeys, publishSnapshot } from '../contract/config-channel.ts';
import type { Snapshot } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import { RedisConfigSource } from './redis-config-source.ts';

let redis: TestRedis;
let client: Redis;
let n = 0;
const sources: RedisConfigSource[] = [];

beforeAll(async () => {
  redis = await startRedis('cfgsrc');
  client = new Redis(redis.url);
});

afterEach(async () => {
  await Promise.all(sources.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

const snap = (version: string, tier = 1): Snapshot => ({
  schema: 1,
  version,
  accounts: {},
  models: {},
  plans: { p: { name: 'p', tier, anthropicEndpoint: false, models: null, rpm: null, tpm: null } },
});

async function source(pollMs = 60_000): Promise<{ src: RedisConfigSource; prefix: string; warnings: string[] }> {
  const prefix = `${redis.prefix}-${++n}`;
  const warnings: string[] = [];
  const src = new RedisConfigSource({
    redis: client,
    subscriber: new Redis(redis.url),
    prefix,
    pollMs,
    log: { info: () => {}, warn: (m) => warnings.push(m) },
  });
  sources.push(src);
  return { src, prefix, warnings };
}

describe('RedisConfigSource', () => {
  it('is not ready and answers 503 with retry-after until the first snapshot', async () => {
    const { src, prefix } = await source();
    await src.start();
    expect(src.ready()).toBe(false);
    let err: unknown;
    try {
      src.current();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ code: 'store_unavailable', retryAfterSec: 2 });
    await publishSnapshot(client, prefix, snap('v1'));
    await until(() => src.ready());
    expect(src.current().version).toBe('v1');
  });

  it('loads what is already published at start, and swaps on each announcement', async () => {
    const { src, prefix } = await source();
    await publishSnapshot(client, prefix, snap('v1'));
    await src.start();
    expect(src.version()).toBe('v1');
    const held = src.current();
    await publishSnapshot(client, prefix, snap('v2', 5));
    await until(() => src.version() === 'v2');
    expect(src.current().plans.p?.tier).toBe(5);
    expect(held.version).toBe('v1'); // a request holding the old snapshot keeps a consistent one
  });

  it('catches up by polling when the announcement was missed', async () => {
    const { src, prefix } = await source(100);
    await src.start();
    // Written without PUBLISH, as if the gateway was reconnecting when it was announced.
    const k = configKeys(prefix);
    await client.set(k.snapshot('v3'), JSON.stringify(snap('v3')));
    await client.set(k.current, 'v3');
    await until(() => src.version() === 'v3');
  });

  it('keeps its last good snapshot when a newer one has a schema it does not understand, and warns once', async () => {
    const { src, prefix, warnings } = await source(50);
    await publishSnapshot(client, prefix, snap('v1'));
    await src.start();
    const k = configKeys(prefix);
    await client.set(k.snapshot('v-next'), JSON.stringify({ ...snap('v-next'), schema: 2, routes: [] }));
    await client.set(k.current, 'v-next');
    await client.publish(k.channel, 'v-next');
    await new Promise((r) => setTimeout(r, 300));
    expect(src.version()).toBe('v1');
    expect(src.ready()).toBe(true);
    expect(warnings).toEqual(['Ignored config version v-next: snapshot schema 2 is not understood (this gateway reads schema 1); kept serving version v1']);
    await publishSnapshot(client, prefix, snap('v4'));
    await until(() => src.version() === 'v4');
  });
});
