// Offboarding on a real kube-apiserver and Redis (docs/console.md, Offboarding): keys made through the console's own
// cluster backend record their owner and groups; once a person's RoleBinding is gone the operator's periodic
// LocalSubjectAccessReview finds no right left and revokes their keys (Ready reason Revoked naming why, an Event,
// 401 at the gateway); a person bound through a group keeps theirs, and so does an owner without any binding on an
// Account that did not ask for it. The operator runs under exactly operator/rbac/role.yaml.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterKeys } from '../../console/keys/cluster-backend.ts';
import { kubeClients } from '../../console/kube/clients.ts';
import { MemoryLastUsed } from '../../gateway/state/last-used.ts';
import { KubeConfig } from '@kubernetes/client-node';
import { docExample } from '../helpers/docs.ts';
import { chat } from '../helpers/fleet.ts';
import { gatewayReady, install, PEPPER, startCluster, type Cluster, type Installation } from './harness.ts';
import { getCustom, ready, waitFor, type ApiKeyObject } from './kube-api.ts';

let cluster: Cluster;
let inst: Installation;
let keys: ClusterKeys;
/** Waits on a machine shared by many test runs: generous, since only the outcome is asserted. */
const SLOW = 90_000;

const base = (ns: string): string => `apiVersion: gateway.svc.dev/v1alpha1
kind: Plan
metadata: {name: builder}
spec: {tier: 2}
---
apiVersion: gateway.svc.dev/v1alpha1
kind: Account
metadata: {name: hobby}
spec:
  planRef: builder
  credits: [{id: c1, amountUsd: 10}]
---
apiVersion: gateway.svc.dev/v1alpha1
kind: ModelRoute
metadata: {name: mock-fast}
spec:
  pricing: {inputPerMTokUsd: 1, outputPerMTokUsd: 2}
  targets: [{name: mock-a, provider: mock}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: acme-self-service, namespace: ${ns}}
rules:
  - apiGroups: [gateway.svc.dev]
    resources: [accounts]
    resourceNames: [acme]
    verbs: [get, create-own-keys]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: acme-alice, namespace: ${ns}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: acme-self-service}
subjects:
  - {apiGroup: rbac.authorization.k8s.io, kind: User, name: "oidc:alice"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: acme-team-b, namespace: ${ns}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: acme-self-service}
subjects:
  - {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "oidc:team-b"}
`;

const SPEC = { monthlyBudgetNano: null, rpm: null, tpm: null, models: null, expiresAt: null };
const apiKey = (name: string): Promise<ApiKeyObject | undefined> => getCustom(cluster.api, inst.ns, 'apikeys', name);
const url = (): string => inst.gateways[0]?.url as string;

/** The ApiKey object the console made for a key name of an account. */
async function objectOf(account: string, name: string): Promise<string> {
  const list = (await cluster.api.custom.listNamespacedCustomObject({
    group: 'gateway.svc.dev',
    version: 'v1alpha1',
    namespace: inst.ns,
    plural: 'apikeys',
  })) as { items: ApiKeyObject[] };
  const found = list.items.find((k) => k.spec.accountRef === account && k.spec.displayName === name);
  if (!found) throw new Error(`no ApiKey for ${account}/${name}`);
  return found.metadata.name;
}

async function served(key: string): Promise<number> {
  return (
    await waitFor(
      'key served',
      async () => {
        const c = await chat(url(), key);
        return c.status === 200 ? c : undefined;
      },
      SLOW,
    )
  ).status;
}

async function kept(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${inst.operators[0]?.port}/metrics`)).text();
  return Number(/^svc_operator_offboard_checks_total\{result="kept"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

beforeAll(async () => {
  cluster = await startCluster('offboard');
  inst = await install(cluster, 'offboard');
  await inst.startOperator('op-0', { SVC_OFFBOARD_CHECK_SECONDS: '1' });
  await inst.startGateway();
  await inst.kubectlOk(['apply', '-f', '-'], base(inst.ns));
  // Account acme as docs/console.md shows it (its trial credit pays for the calls).
  await inst.kubectlOk(
    ['apply', '-f', '-'],
    docExample('docs/console.md', 'console-offboarding-account').replaceAll('namespace: svc-gateway', `namespace: ${inst.ns}`),
  );
  await gatewayReady(inst.gateways[0] as NonNullable<Installation['gateways'][0]>, 60_000, () => inst.operators[0]?.output() ?? '');
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.cp.kubeconfig);
  // The console's own backend (create() reads no last-used time).
  keys = new ClusterKeys(kubeClients(inst.ns, kc), PEPPER, new MemoryLastUsed());
}, 180_000);

afterAll(async () => {
  await inst?.stop();
  await cluster?.stop();
});

describe('revokeOnOffboard', () => {
  it('revokes the keys of a person whose binding is gone; a group member and another account keep theirs', { timeout: 300_000 }, async () => {
    const now = Date.now();
    const alice = await keys.create('acme', { ...SPEC, name: 'alice-laptop' }, { name: 'oidc:alice', groups: ['oidc:everyone'] }, now);
    const bob = await keys.create('acme', { ...SPEC, name: 'bob-ci' }, { name: 'oidc:bob', groups: ['oidc:team-b', 'oidc:everyone'] }, now);
    // No binding at all on hobby, which did not ask for offboarding: left alone.
    const carol = await keys.create('hobby', { ...SPEC, name: 'carol-test' }, { name: 'oidc:carol', groups: [] }, now);
    const [aliceObj, bobObj, carolObj] = await Promise.all([objectOf('acme', 'alice-laptop'), objectOf('acme', 'bob-ci'), objectOf('hobby', 'carol-test')]);
    expect((await apiKey(bobObj))?.metadata.annotations).toMatchObject({
      'gateway.svc.dev/created-by': 'oidc:bob',
      'gateway.svc.dev/created-by-groups': JSON.stringify(['oidc:team-b', 'oidc:everyone']),
    });
    expect(await served(alice.key)).toBe(200);
    expect(await served(bob.key)).toBe(200);
    expect(await served(carol.key)).toBe(200);
    // Everyone is still bound: passes run and keep them.
    await waitFor('an offboarding pass that kept an owner', async () => (await kept()) > 0, SLOW);
    expect((await apiKey(aliceObj))?.spec.revoked).toBe(false);

    await inst.kubectlOk(['delete', 'rolebinding', 'acme-alice']);
    const revoked = await waitFor(
      'alice-laptop Revoked',
      async () => {
        const k = await apiKey(aliceObj);
        return k?.status?.state === 'Revoked' && ready(k)?.reason === 'Revoked' ? k : undefined;
      },
      SLOW,
    );
    expect(revoked.spec.revoked).toBe(true);
    expect(revoked.metadata.annotations).toMatchObject({
      'gateway.svc.dev/revoked-by': 'svc-gateway-operator',
      'gateway.svc.dev/revoke-reason': 'offboarded: oidc:alice has no right left on account acme',
    });
    expect(revoked.status?.conditions?.find((c) => c.type === 'Ready')?.message).toBe(
      'The key is revoked (offboarded: oidc:alice has no right left on account acme): every gateway refuses it, for good.',
    );
    const events = await inst.kubectlOk([
      'get',
      'events',
      '--field-selector',
      `involvedObject.name=${aliceObj}`,
      '-o',
      'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}',
    ]);
    expect(events).toContain('KeyRevokedOffboarded: Revoked: oidc:alice has no right left on account acme (Account spec.selfService.revokeOnOffboard).');
    const refused = await waitFor(
      'alice-laptop refused',
      async () => {
        const c = await chat(url(), alice.key);
        return c.status === 401 ? c : undefined;
      },
      SLOW,
    );
    expect(refused.status).toBe(401);

    // A whole pass after that one: bob (bound through his recorded group) and carol keep their keys.
    const before = await kept();
    await waitFor('a later pass that kept bob', async () => (await kept()) > before, SLOW);
    expect((await apiKey(bobObj))?.status?.state).toBe('Active');
    expect((await apiKey(carolObj))?.status?.state).toBe('Active');
    expect((await chat(url(), bob.key)).status).toBe(200);
    expect((await chat(url(), carol.key)).status).toBe(200);
  });
});
