// Sign-ins under way, in memory and in a real Redis: taken once, and not after their 10 minutes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../../test/helpers/redis.ts';
import { FLOW_TTL_MS, MemoryFlows, RedisFlows, type PendingFlow } from './flows.ts';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis('console-oidc-flows');
});
afterAll(async () => {
  await redis?.stop();
});

const FLOW: PendingFlow = { state: 's', nonce: 'n', codeVerifier: 'v', redirectUri: 'http://127.0.0.1/cb', next: '/dashboard/keys' };

describe('OIDC flows', () => {
  it.each([
    ['memory', () => new MemoryFlows()],
    ['redis', () => new RedisFlows(redis.client, redis.prefix)],
  ])('%s: a flow is taken once, by its id only, and holds no id in the clear', async (kind, make) => {
    const flows = make();
    const id = await flows.put(FLOW, 1000);
    await expect(flows.take('another-id', 1001)).resolves.toBeNull();
    await expect(flows.take(id, 1001)).resolves.toEqual(FLOW);
    await expect(flows.take(id, 1002)).resolves.toBeNull();
    if (kind === 'redis') {
      const keys = await redis.client.keys(`${redis.prefix}:console:oidc-flow:*`);
      expect(keys.join(' ')).not.toContain(id);
    }
  });

  it('memory: a flow older than 10 minutes is gone', async () => {
    const flows = new MemoryFlows();
    const id = await flows.put(FLOW, 0);
    await expect(flows.take(id, FLOW_TTL_MS + 1)).resolves.toBeNull();
  });

  it('redis: a flow expires with its 10 minutes', async () => {
    const flows = new RedisFlows(redis.client, redis.prefix);
    await flows.put(FLOW, 0);
    const [key] = await redis.client.keys(`${redis.prefix}:console:oidc-flow:*`);
    const ttl = await redis.client.pttl(key as string);
    expect(ttl).toBeGreaterThan(FLOW_TTL_MS - 5000);
    expect(ttl).toBeLessThanOrEqual(FLOW_TTL_MS);
  });
});
