// Revocation across replicas (docs/billing.md: Revocation): revoke a key while traffic runs against 3 processes. Every call started after the revoke
// took effect gets 401; calls already in flight finish; no later (stale) config makes the key work again.
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../gateway/contract/keys.ts';
import { chat, FLEET_PEPPER, me, type CallResult, useFleet } from '../helpers/fleet.ts';
import { setup, withKeySpec } from './fixtures.ts';

const s = setup(
  [{ name: 'acme', spec: { trialCreditUsd: 100 } }],
  [
    { name: 'doomed', account: 'acme' },
    { name: 'doomed-by-config', account: 'acme' },
  ],
  30,
);
const ctx = useFleet('revoke', s.docs);

/** 12 workers calling the slow (30 ms) model round-robin over the processes until `until()` (bounded). */
async function traffic(key: string, until: () => boolean): Promise<CallResult[]> {
  const results: CallResult[] = [];
  const end = Date.now() + 20_000;
  await Promise.all(
    Array.from({ length: 12 }, async (_, w) => {
      for (let i = 0; !until() && Date.now() < end; i++) results.push(await chat(ctx.fleet.urls[(w + i) % 3] as string, key, { model: 'mock-slow' }));
    }),
  );
  return results;
}

function report(name: string, results: CallResult[], effectiveAt: number): void {
  const after = results.filter((r) => r.startedAt >= effectiveAt);
  const lastOk = Math.max(...results.filter((r) => r.status === 200).map((r) => r.startedAt + r.ms));
  console.log(
    `${name}: ${results.length} calls, ${after.length} started after the revoke took effect, of which accepted: ${after.filter((r) => r.status !== 401).length}; last 200 finished ${lastOk - effectiveAt} ms after`,
  );
}

describe('revocation across 3 gateway processes', () => {
  it('refuses every call started after revoke() returned, on every process; in-flight calls finish', async () => {
    const key = s.keys.doomed as string;
    let effectiveAt = Infinity;
    let stopAt = Infinity;
    const running = traffic(key, () => Date.now() > stopAt);
    await new Promise((r) => setTimeout(r, 500));
    const revokeStarted = Date.now();
    await ctx.store.revoke(hashKey(key, FLEET_PEPPER)); // what the operator does on ApiKey.spec.revoked
    effectiveAt = Date.now();
    stopAt = effectiveAt + 700;
    const results = await running;
    report('revoke()', results, effectiveAt);
    const before = results.filter((r) => r.startedAt + r.ms < revokeStarted);
    const after = results.filter((r) => r.startedAt >= effectiveAt);
    expect(before.length).toBeGreaterThan(10);
    expect(before.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((r) => r.status !== 401)).toEqual([]);
    expect(JSON.parse(after[0]?.body ?? '{}')).toMatchObject({ error: { code: 'key_revoked' } });
    for (const url of ctx.fleet.urls) expect((await me(url, key)).status).toBe(401);
  });

  it('revokes through a published manifest, and a stale manifest started later cannot bring the key back', async () => {
    const key = s.keys['doomed-by-config'] as string;
    expect((await chat(ctx.fleet.urls[0] as string, key)).status).toBe(200);
    let effectiveAt = Infinity;
    let stopAt = Infinity;
    const running = traffic(key, () => Date.now() > stopAt);
    await new Promise((r) => setTimeout(r, 300));
    await ctx.fleet.add(withKeySpec(s.docs, 'doomed-by-config', { revoked: true })); // ready = published
    effectiveAt = Date.now();
    stopAt = effectiveAt + 500;
    const results = await running;
    report('manifest revoked: true', results, effectiveAt);
    expect(results.filter((r) => r.startedAt >= effectiveAt && r.status !== 401)).toEqual([]);
    await ctx.fleet.add(s.docs); // the old manifests again: revoked: false
    for (const url of ctx.fleet.urls) {
      expect((await chat(url, key)).status).toBe(401);
      expect((await me(url, key)).status).toBe(401);
    }
    expect((await ctx.store.findKey(hashKey(key, FLEET_PEPPER)))?.revoked).toBe(true);
  });
});
