// The operator killed (SIGKILL) in the middle of a burst of work, then started again: level-based reconciles must
// converge with no duplicate key (a key once in a Secret never changes), no lost revocation (made before or
// while it was down), and every status right.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat } from '../helpers/fleet.ts';
import { gatewayReady, install, startCluster, type Cluster, type Installation } from './harness.ts';
import { getCustom, ready, secretKey, waitFor } from './kube-api.ts';
import { untilAll } from './propagation.ts';

let cluster: Cluster;
let inst: Installation;

const API = 'gateway.svc.dev/v1alpha1';
const doc = (kind: string, name: string, spec: object): object => ({ apiVersion: API, kind, metadata: { name }, spec });
const key = (name: string, revoked = false): object => doc('ApiKey', name, { accountRef: 'acme', revoked });
const list = (items: object[]): string => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
const OLD = ['k0', 'k1', 'k2', 'k3', 'k4'];
const NEW = Array.from({ length: 30 }, (_, i) => `n${i}`);

beforeAll(async () => {
  cluster = await startCluster('crash');
  inst = await install(cluster, 'crash');
  await inst.startOperator('op-0');
  await inst.startGateway();
  await gatewayReady(inst.gateways[0]!, 20_000, () => inst.operators[0]?.output() ?? '');
}, 120_000);

afterAll(async () => {
  await inst?.stop();
  await cluster?.stop();
});

async function managedSecrets(): Promise<Map<string, string>> {
  const l = await cluster.api.core.listNamespacedSecret({ namespace: inst.ns, labelSelector: 'gateway.svc.dev/apikey' });
  return new Map(l.items.map((s) => [s.metadata?.name ?? '', Buffer.from(s.data?.key ?? '', 'base64').toString()]));
}

describe('SIGKILL mid-reconcile, then a restart', () => {
  it('converges: no duplicate keys, no lost revocation, statuses right', async () => {
    const url = inst.gateways[0]!.url;
    await inst.kubectlOk(
      ['apply', '-f', '-'],
      list([
        doc('Plan', 'p', { tier: 1 }),
        doc('Account', 'acme', { planRef: 'p', credits: [{ id: 'c1', amountUsd: 100 }] }),
        doc('ModelRoute', 'mock-mini', { pricing: { inputPerMTokUsd: 1 }, targets: [{ name: 'mock', provider: 'mock' }] }),
        ...OLD.map((n) => key(n)),
      ]),
    );
    const oldKeys = new Map<string, string>();
    for (const n of OLD) oldKeys.set(n, await waitFor(`${n} key`, () => secretKey(cluster.api, inst.ns, `${n}-key`)));
    await untilAll([url], async (u) => (await Promise.all(OLD.map((n) => chat(u, oldKeys.get(n)!, { model: 'mock-mini' })))).every((r) => r.status === 200));

    // A burst: 30 new keys and 3 revocations in one apply; the operator dies as soon as it has started on them.
    const op = inst.operators[0]!;
    // Watched while kubectl still applies: the operator keeps up with kubectl's one-object-at-a-time creates, so once
    // the apply returned it would have written nearly every Secret.
    const applied = inst.kubectlOk(['apply', '-f', '-'], list([...NEW.map((n) => key(n)), key('k0', true), key('k1', true), key('k2', true)]));
    await waitFor('the first new Secret', async () => [...(await managedSecrets()).keys()].some((n) => n.startsWith('n')), 15_000, 5);
    await op.kill('SIGKILL');
    await applied;
    const atKill = await managedSecrets();
    const newAtKill = [...atKill.keys()].filter((n) => n.startsWith('n')).length;
    process.stdout.write(`operator killed with ${newAtKill} of ${NEW.length} new key Secrets written\n`);
    expect(newAtKill).toBeLessThan(NEW.length); // it really was mid-way

    // A revocation made while no operator runs.
    await inst.kubectlOk(['patch', 'apikey', 'k3', '--type=merge', '-p', '{"spec":{"revoked":true}}']);
    await inst.startOperator('op-0'); // the same Pod name, restarted

    const revoked = ['k0', 'k1', 'k2', 'k3'];
    for (const n of revoked) {
      await waitFor(`${n} Revoked`, async () => (await getCustom(cluster.api, inst.ns, 'apikeys', n))?.status?.state === 'Revoked', 20_000);
    }
    const keys = new Map<string, string>();
    for (const n of NEW) keys.set(n, await waitFor(`${n} key`, () => secretKey(cluster.api, inst.ns, `${n}-key`), 20_000));
    for (const n of NEW) await waitFor(`${n} Active`, async () => ready(await getCustom(cluster.api, inst.ns, 'apikeys', n))?.reason === 'Active', 20_000);

    // No duplicates: one Secret per ApiKey, keys seen before the kill unchanged, each status shows its own key.
    const after = await managedSecrets();
    expect([...after.keys()].sort()).toEqual([...OLD, ...NEW].map((n) => `${n}-key`).sort());
    for (const [name, k] of atKill) expect(after.get(name), name).toBe(k);
    for (const n of OLD) expect(after.get(`${n}-key`)).toBe(oldKeys.get(n));
    for (const n of [...OLD, ...NEW]) {
      const status = (await getCustom(cluster.api, inst.ns, 'apikeys', n))?.status;
      expect(status?.displayedKey, n).toBe(`sk-svc-…${after.get(`${n}-key`)?.slice(-4)}`);
    }
    // Redis holds one record per ApiKey, and the revoked ones revoked.
    const r = cluster.redis.client;
    const records = await Promise.all((await r.smembers(`${inst.prefix}:keys`)).map((h) => r.hgetall(`${inst.prefix}:key:${h}`)));
    const names = records.map((rec) => (JSON.parse(rec.record ?? '{}') as { name?: string }).name).sort();
    expect(names).toEqual([...OLD, ...NEW].sort());
    expect(
      records
        .filter((rec) => rec.revoked === '1')
        .map((rec) => (JSON.parse(rec.record ?? '{}') as { name: string }).name)
        .sort(),
    ).toEqual(revoked);

    // What every gateway answers.
    for (const n of revoked) expect((await chat(url, oldKeys.get(n)!, { model: 'mock-mini' })).status, n).toBe(401);
    expect((await chat(url, oldKeys.get('k4')!, { model: 'mock-mini' })).status).toBe(200);
    await untilAll([url], async (u) => (await Promise.all(NEW.map((n) => chat(u, keys.get(n)!, { model: 'mock-mini' })))).every((x) => x.status === 200));

    // At most one KeyGenerated event per ApiKey (a restart may have missed one, never doubled one).
    const reasons = JSON.parse(await inst.kubectlOk(['get', 'events', '-o', 'json'])) as { items: Array<{ reason: string; involvedObject: { name: string } }> };
    const generated = reasons.items.filter((e) => e.reason === 'KeyGenerated').map((e) => e.involvedObject.name);
    expect(new Set(generated).size).toBe(generated.length);
  }, 120_000);
});
