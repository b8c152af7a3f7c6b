// The console's cluster backend and key expiry on a real kube-apiserver (README: Keys, expiry and rotation): the
// Create form's limits carry the Account's keyPolicy; a key made with an expiry is an ApiKey with spec.expiresAt
// (RFC 3339, accepted by the CRD schema); the list shows it and Expired once past; a rotation whose grace period
// outlives the old key's expiry stops the old key at its expiry (the revoke-at annotation), and the successor keeps
// the old key's lifetime.
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterKeys, REVOKE_AT } from '../../console/keys/cluster-backend.ts';
import { kubeClients } from '../../console/kube/clients.ts';
import { MemoryLastUsed } from '../../gateway/state/last-used.ts';
import { startControlPlane, type ControlPlane } from '../k8s/control-plane.ts';
import { installCrds } from '../k8s/install-crds.ts';
import { createNamespace, kubectlOk } from '../k8s/kubectl.ts';

const API = 'gateway.svc.dev/v1alpha1';
const DAY = 86_400_000;
let cp: ControlPlane;
let keys: ClusterKeys;
let ns: string;

beforeAll(async () => {
  cp = await startControlPlane();
  await installCrds(cp);
  ns = await createNamespace(cp, 'expiry');
  const docs = [
    { apiVersion: API, kind: 'Plan', metadata: { name: 'builder' }, spec: { tier: 2 } },
    { apiVersion: API, kind: 'Account', metadata: { name: 'strict' }, spec: { planRef: 'builder', keyPolicy: { maxKeyAgeDays: 30, requireExpiry: true } } },
  ];
  await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], docs.map((d) => JSON.stringify(d)).join('\n---\n'));
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfig);
  keys = new ClusterKeys(kubeClients(ns, kc), 'pepper', new MemoryLastUsed());
}, 180_000);

afterAll(async () => {
  await cp?.stop();
});

describe('cluster keys and expiry', () => {
  it("reads the account's keyPolicy; writes spec.expiresAt; shows Expired once past; a rotation stops the old key at its expiry when that comes first", async () => {
    expect(await keys.planLimits('strict')).toEqual({ rpm: null, tpm: null, keyPolicy: { maxKeyAgeDays: 30, requireExpiry: true } });
    const now = Date.now();
    const expiresAt = Math.floor((now + 20 * DAY) / 1000) * 1000;
    await keys.create('strict', { name: 'ci', monthlyBudgetNano: null, rpm: null, tpm: null, models: null, expiresAt }, 'alice', now);
    const obj = JSON.parse(await kubectlOk(cp, ['get', 'apikey', 'strict.ci', '-n', ns, '-o', 'json'])) as { spec: { expiresAt: string } };
    expect(Date.parse(obj.spec.expiresAt)).toBe(expiresAt);
    const row = async (name: string, at: number): Promise<object | undefined> => (await keys.list('strict', 0, 50, at)).rows.find((r) => r.name === name);
    expect(await row('ci', now)).toMatchObject({ state: 'Active', expiresAt });
    expect(await row('ci', expiresAt)).toMatchObject({ state: 'Expired' });

    // 3 days before its expiry, rotated with a 7-day grace period: the expiry wins.
    const rotatedAt = expiresAt - 3 * DAY;
    const next = await keys.rotate('strict', 'ci', 7 * DAY, 'alice', rotatedAt);
    expect(next.previousStopsAt).toBe(expiresAt);
    const old = JSON.parse(await kubectlOk(cp, ['get', 'apikey', 'strict.ci', '-n', ns, '-o', 'json'])) as {
      metadata: { annotations: Record<string, string> };
    };
    expect(Date.parse(old.metadata.annotations[REVOKE_AT] as string)).toBe(expiresAt);
    // The successor lives as long as the old key did (from its creation to its expiry), capped at 30 days.
    const created = Date.parse(((await keys.list('strict', 0, 50, now)).rows.find((r) => r.name === 'ci') as { createdAt: string }).createdAt);
    expect(next.row.expiresAt).toBe(Math.floor((rotatedAt + Math.min(expiresAt - created, 30 * DAY)) / 1000) * 1000);
    expect(await row('ci-2', rotatedAt)).toMatchObject({ state: 'Active', expiresAt: next.row.expiresAt });
  });
});
