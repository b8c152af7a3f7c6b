// The config channel on a real Redis: content-addressed snapshots, `current` moved in the same step, an
// announcement per publish, old snapshots trimmed, and a decoder that refuses what this build cannot read.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import { configKeys, decodeSnapshot, KEEP_SNAPSHOTS, publishSnapshot, readCurrentVersion, readSnapshot } from './config-channel.ts';
import type { Snapshot } from './snapshot.ts';

let redis: TestRedis;
let client: Redis;
let n = 0;

beforeAll(async () => {
  redis = await startRedis('channel');
  client = new Redis(redis.url);
});

afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

const snap = (version: string): Snapshot => ({ schema: 1, version, plans: {}, accounts: {}, models: {} });

describe('publishSnapshot', () => {
  it('stores the snapshot under its version, moves current to it and announces it', async () => {
    const prefix = `${redis.prefix}-${++n}`;
    const sub = new Redis(redis.url);
    const heard: string[] = [];
    sub.on('message', (_ch: string, v: string) => heard.push(v));
    await sub.subscribe(configKeys(prefix).channel);
    await publishSnapshot(client, prefix, snap('v1'));
    await publishSnapshot(client, prefix, snap('v2'));
    expect(await readCurrentVersion(client, prefix)).toBe('v2');
    expect(decodeSnapshot((await readSnapshot(client, prefix, 'v1')) ?? '')).toEqual({ ok: true, snapshot: snap('v1') });
    await new Promise((r) => setTimeout(r, 50));
    expect(heard).toEqual(['v1', 'v2']);
    sub.disconnect();
  });

  it('is idempotent and keeps only the last snapshots', async () => {
    const prefix = `${redis.prefix}-${++n}`;
    for (let i = 0; i < KEEP_SNAPSHOTS + 5; i++) await publishSnapshot(client, prefix, snap(`v${i}`));
    await publishSnapshot(client, prefix, snap(`v${KEEP_SNAPSHOTS + 4}`));
    const stored = await client.keys(`${prefix}:config:snapshots:*`);
    expect(stored).toHaveLength(KEEP_SNAPSHOTS);
    expect(await client.lrange(configKeys(prefix).history, 0, -1)).toHaveLength(KEEP_SNAPSHOTS);
    expect(await readSnapshot(client, prefix, 'v0')).toBeNull();
    expect(await readCurrentVersion(client, prefix)).toBe(`v${KEEP_SNAPSHOTS + 4}`);
  });
});

describe('decodeSnapshot', () => {
  it.each([
    ['not JSON', '{', /not JSON/],
    ['a newer schema', JSON.stringify({ ...snap('v9'), schema: 2 }), /schema 2 is not understood \(this gateway reads schema 1\)/],
    ['no schema', JSON.stringify({ version: 'v' }), /schema undefined is not understood/],
    ['a wrong shape', JSON.stringify({ ...snap('v9'), plans: { p: { name: 1 } } }), /does not match schema 1: plans.p/],
  ])('refuses %s with a reason', (_case, raw, reason) => {
    const d = decodeSnapshot(raw);
    expect(d.ok).toBe(false);
    expect(d.ok ? '' : d.reason).toMatch(reason);
  });

  it('refuses a snapshot stored under another version than its own', () => {
    expect(decodeSnapshot(JSON.stringify(snap('a')), 'b')).toEqual({ ok: false, reason: 'the snapshot stored under version b says it is a' });
  });
});
