import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compile } from '../../gateway/contract/compile.ts';
import { hashKey } from '../../gateway/contract/keys.ts';
import { parseManifests } from '../../gateway/config/manifests.ts';
import { MemoryLastUsed } from '../../gateway/state/last-used.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { basics } from '../../test/helpers/manifests.ts';
import { MemoryPublisher } from './publisher.ts';
import { MemoryRegistry } from './registry.ts';
import { StandaloneKeys } from './standalone-backend.ts';

const PEPPER = 'unit-pepper';
const dir = mkdtempSync(join(tmpdir(), 'svc-console-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function setup(file: string): Promise<{ keys: StandaloneKeys; store: MemoryStore; account: string }> {
  const { docs } = basics();
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `t#${i}`, doc })));
  const c = compile(parsed.set, { pepper: PEPPER });
  const store = new MemoryStore(new MemoryUsageSink());
  await store.applyConfig(c.snapshot, c.keys);
  const keys = new StandaloneKeys({
    snapshot: c.snapshot,
    configKeys: c.keys,
    pepper: PEPPER,
    store,
    lastUsed: new MemoryLastUsed(),
    publisher: new MemoryPublisher(store, c.snapshot, c.keys),
    registry: new MemoryRegistry(file),
  });
  return { keys, store, account: c.keys[0]?.account as string };
}

describe('standalone keys', () => {
  it('creates a key stored only as its HMAC; rotation revokes the old key when the grace period ends, across a restart', async () => {
    const file = join(dir, 'state.json');
    const t0 = Date.UTC(2026, 4, 1);
    const a = await setup(file);
    const made = await a.keys.create(a.account, { name: 'bot', monthlyBudgetNano: null, rpm: 10, tpm: null, models: null, expiresAt: null }, 'admin', t0);
    expect((await a.store.findKey(hashKey(made.key, PEPPER)))?.name).toBe('bot');
    expect(readFileSync(file, 'utf8')).not.toContain(made.key.slice(7));
    await expect(
      a.keys.create(a.account, { name: 'bot', monthlyBudgetNano: null, rpm: null, tpm: null, models: null, expiresAt: null }, 'admin', t0),
    ).rejects.toThrow(/already has a key named bot/);

    const rotated = await a.keys.rotate(a.account, 'bot', 3600_000, 'admin', t0);
    expect(rotated.row).toMatchObject({ name: 'bot-2', rpm: 10 });
    const page = await a.keys.list(a.account, 0, 50, t0 + 1000);
    expect(page.rows.find((r) => r.name === 'bot')).toMatchObject({ state: 'Active', revokeAt: t0 + 3600_000 });
    // The rotate form sent again (a reload of its answer) makes no second successor.
    await expect(a.keys.rotate(a.account, 'bot', 3600_000, 'admin', t0 + 10)).rejects.toThrow(/being rotated already/);
    expect((await a.keys.list(a.account, 0, 50, t0 + 1000)).rows.filter((r) => r.name.startsWith('bot-'))).toHaveLength(1);

    // A new process (same pepper, same state file) brings the console's keys back and keeps the pending revocation.
    const b = await setup(file);
    await b.keys.restore(t0 + 2000);
    expect((await b.store.findKey(hashKey(made.key, PEPPER)))?.revoked).toBe(false);
    expect((await b.store.findKey(hashKey(rotated.key, PEPPER)))?.revoked).toBe(false);
    await b.keys.sweep(t0 + 3600_000);
    expect((await b.store.findKey(hashKey(made.key, PEPPER)))?.revoked).toBe(true);
    const after = await b.keys.list(b.account, 0, 50, t0 + 3600_001);
    expect(after.rows.filter((r) => r.name.startsWith('bot')).map((r) => [r.name, r.state, r.revokeAt])).toEqual([
      ['bot', 'Revoked', null],
      ['bot-2', 'Active', null],
    ]);
    await expect(b.keys.rotate(b.account, 'bot', 0, 'admin', t0)).rejects.toThrow(/revoked already/);
  });

  it("shows a key's expiry and Expired state; a rotation whose grace outlives the old key's expiry stops it at its expiry (the earlier wins)", async () => {
    const a = await setup(join(dir, 'expiry.json'));
    const t0 = Date.UTC(2026, 4, 1);
    const DAY = 86_400_000;
    await a.keys.create(a.account, { name: 'monthly', monthlyBudgetNano: null, rpm: null, tpm: null, models: null, expiresAt: t0 + 30 * DAY }, 'admin', t0);
    const row = async (name: string, now: number): Promise<object | undefined> => (await a.keys.list(a.account, 0, 50, now)).rows.find((r) => r.name === name);
    expect(await row('monthly', t0)).toMatchObject({ state: 'Active', expiresAt: t0 + 30 * DAY, revokeAt: null });
    expect(await row('monthly', t0 + 30 * DAY)).toMatchObject({ state: 'Expired' });

    const rotatedAt = t0 + 29.5 * DAY;
    const next = await a.keys.rotate(a.account, 'monthly', 7 * DAY, 'admin', rotatedAt);
    // The successor lives as long as the old key did (30 days), from the rotation.
    expect(next.row).toMatchObject({ name: 'monthly-2', expiresAt: rotatedAt + 30 * DAY });
    expect(await row('monthly', rotatedAt)).toMatchObject({ state: 'Active', revokeAt: t0 + 30 * DAY });
    await a.keys.sweep(t0 + 30 * DAY);
    expect(await row('monthly', t0 + 30 * DAY)).toMatchObject({ state: 'Revoked' });
  });

  it('paginates on the server', async () => {
    const a = await setup(join(dir, 'pages.json'));
    for (let i = 0; i < 7; i++)
      await a.keys.create(a.account, { name: `k${i}`, monthlyBudgetNano: null, rpm: null, tpm: null, models: null, expiresAt: null }, 'admin', 0);
    const p1 = await a.keys.list(a.account, 0, 5, 0);
    const p2 = await a.keys.list(a.account, 5, 5, 0);
    expect(p1.total).toBe(p2.total);
    expect(p1.rows).toHaveLength(5);
    expect(new Set([...p1.rows, ...p2.rows].map((r) => r.name)).size).toBe(p1.total);
  });
});
