// The MCP sessions' idle record, in memory and in a real Redis, with explicit clocks: a used session stays open, a
// session idle past the TTL is refused from then on and claimed by one sweep only, an ended one is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import { MemoryMcpSessions, RedisMcpSessions, type McpSessionStore } from './mcp-sessions.ts';

let redis: TestRedis;
let n = 0;

beforeAll(async () => {
  redis = await startRedis('mcp-sessions');
}, 60_000);

afterAll(async () => {
  await redis?.stop();
});

const stores: [string, () => McpSessionStore][] = [
  ['memory', () => new MemoryMcpSessions()],
  ['redis', () => new RedisMcpSessions(redis.client as never, `${redis.prefix}-${++n}`)],
];

describe.each(stores)('%s', (_name, make) => {
  const rec = (i: number) => ({ sealed: `sealed-${i}`, keyHash: `hash-${i}` });

  it('keeps a used session open and refuses it once idle past the TTL, even before a sweep', async () => {
    const s = make();
    await s.start('a', rec(1), 1_000);
    expect(await s.touch('a', 1_500, 1_500 - 1_000)).toBe(true);
    expect(await s.touch('a', 2_400, 2_400 - 1_000)).toBe(true);
    // 1 001 ms after its last use with a 1 000 ms TTL: refused, and still refused after.
    expect(await s.touch('a', 3_401, 3_401 - 1_000)).toBe(false);
    expect(await s.touch('a', 3_402, 3_402 - 1_000)).toBe(false);
    expect(await s.touch('unknown', 3_402, 0)).toBe(false);
  });

  it('hands each idle session to one sweep, with its record, and never again', async () => {
    const s = make();
    await s.start('old', rec(1), 1_000);
    await s.start('new', rec(2), 5_000);
    expect(await s.claimIdle(4_000, 100)).toEqual([rec(1)]);
    expect(await s.claimIdle(4_000, 100)).toEqual([]);
    expect(await s.touch('old', 4_000, 0)).toBe(false);
    expect(await s.touch('new', 5_500, 4_500)).toBe(true);
  });

  it('refuses a session once ended (DELETE) and gives it to no sweep', async () => {
    const s = make();
    await s.start('gone', rec(3), 1_000);
    await s.end('gone');
    expect(await s.touch('gone', 1_001, 0)).toBe(false);
    expect(await s.claimIdle(1_000_000, 100)).toEqual([]);
  });
});
