// Two operator replicas on one Lease: only the leader writes; when it dies the other takes over; a leader that can
// no longer renew (here: its RBAC binding removed) exits before anyone else may take the lease. Each replica runs
// as its own ServiceAccount bound to operator/rbac/role.yaml, which also shows the Role is all the operator needs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat } from '../helpers/fleet.ts';
import { kubectl } from '../k8s/kubectl.ts';
import { gatewayReady, install, PEPPER, startCluster, type Cluster, type Installation } from './harness.ts';
import { operatorIdentity, serviceAccountUser } from './identity.ts';
import { secretKey, waitFor } from './kube-api.ts';
import { FAST_LEASE, startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { untilAll } from './propagation.ts';

let cluster: Cluster;
let inst: Installation;
const ops: Record<string, OperatorProcess> = {};

const API = 'gateway.svc.dev/v1alpha1';
/** The lease op-c writes when it leads (the others use the fast lease of 3 s). */
const LONG_LEASE_MS = 60_000;
const apiKeyDoc = (name: string): string => JSON.stringify({ apiVersion: API, kind: 'ApiKey', metadata: { name }, spec: { accountRef: 'acme' } });

async function replica(name: string, env: Record<string, string> = {}): Promise<OperatorProcess> {
  const kubeconfig = await operatorIdentity(cluster.cp, inst.ns, name);
  const op = await startOperatorProcess(name, {
    KUBECONFIG: kubeconfig,
    WATCH_NAMESPACE: inst.ns,
    REDIS_URL: cluster.redis.url,
    SVC_REDIS_PREFIX: inst.prefix,
    SVC_KEY_PEPPER: PEPPER,
    ...FAST_LEASE,
    ...env,
  });
  inst.operators.push(op);
  ops[name] = op;
  return op;
}

/** The Lease's holder; '' while no replica has created the Lease yet (a slow start on a busy machine). */
const holder = async (): Promise<string> => {
  const r = await inst.kubectl(['get', 'lease', 'svc-gateway-operator', '-o', 'jsonpath={.spec.holderIdentity}']);
  if (r.code !== 0 && /NotFound/.test(r.stderr)) return '';
  if (r.code !== 0) throw new Error(`kubectl get lease failed (${r.code}): ${r.stderr}`);
  return r.stdout.trim();
};
const logged = (op: OperatorProcess, msg: string): Array<Record<string, unknown>> => op.logs().filter((l) => l.msg === msg);
const WRITES = ['Published config', 'Updated status', 'Generated key', 'Revoked key'];

beforeAll(async () => {
  cluster = await startCluster('leader');
  inst = await install(cluster, 'leader');
  await inst.kubectlOk(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: API, kind: 'Plan', metadata: { name: 'p' }, spec: { tier: 1 } },
        { apiVersion: API, kind: 'Account', metadata: { name: 'acme' }, spec: { planRef: 'p' } },
        {
          apiVersion: API,
          kind: 'ModelRoute',
          metadata: { name: 'mock-mini' },
          spec: { pricing: { inputPerMTokUsd: 1 }, targets: [{ name: 'mock', provider: 'mock' }] },
        },
      ],
    }),
  );
  await replica('op-a');
  await waitFor('op-a to lead', async () => (await holder()) === 'op-a');
  await replica('op-b');
  await inst.startGateway();
  await gatewayReady(inst.gateways[0]!, 20_000, () => ops['op-a']?.output() ?? '');
}, 120_000);

afterAll(async () => {
  await inst?.stop();
  await cluster?.stop();
});

const served = async (name: string): Promise<number> => {
  const key = await waitFor(`${name} key`, () => secretKey(cluster.api, inst.ns, `${name}-key`), 20_000);
  return untilAll([inst.gateways[0]!.url], (u) => chat(u, key, { model: 'mock-mini' }).then((r) => r.status === 200), 20_000);
};

describe('two replicas', () => {
  it('only the leader writes', async () => {
    await inst.kubectlOk(['apply', '-f', '-'], apiKeyDoc('first'));
    await served('first');
    const [a, b] = [ops['op-a']!, ops['op-b']!];
    expect(await a.metric('svc_operator_leader')).toBe(1);
    expect(await b.metric('svc_operator_leader')).toBe(0);
    expect(await b.metric('svc_operator_reconcile_total')).toBe(0);
    expect(await b.metric('svc_operator_config_publish_total')).toBe(0);
    for (const m of WRITES) expect(logged(b, m), m).toEqual([]);
    expect(logged(a, 'Generated key')).toHaveLength(1);
    // A standby is ready (to take over); both are healthy.
    for (const op of [a, b]) expect((await fetch(`http://127.0.0.1:${op.port}/readyz`)).status).toBe(200);
  });

  it('the standby takes over when the leader is killed', async () => {
    const b = ops['op-b']!;
    const killedAt = Date.now();
    await ops['op-a']!.kill('SIGKILL');
    await inst.kubectlOk(['apply', '-f', '-'], apiKeyDoc('after-failover'));
    const at = await served('after-failover');
    process.stdout.write(`failover: new key served ${at - killedAt} ms after the leader was killed (lease 3 s, retry 0.5 s)\n`);
    expect(await holder()).toBe('op-b');
    expect(await b.metric('svc_operator_leader')).toBe(1);
    expect(logged(b, 'Generated key').map((l) => l.ApiKey)).toEqual([`${inst.ns}/after-failover`]);
  });

  it('a leader that cannot renew exits before another replica takes the lease', async () => {
    // op-c holds the lease for a minute when it leads: the SIGTERM hand-over below then shows, with no timing
    // a loaded machine can break, that the standby did not wait for the lease to expire.
    const c = await replica('op-c', { SVC_LEASE_DURATION_MS: String(LONG_LEASE_MS) });
    const b = ops['op-b']!;
    // op-b loses its rights (as if its credentials were revoked or the API server became unreachable for it).
    await inst.kubectlOk(['delete', 'rolebinding', 'op-b']);
    const code = await b.exited;
    expect(code).toBe(1);
    const lost = logged(b, 'Lost leadership; exiting so that only one replica writes')[0];
    expect(lost?.reason).toMatch(/not renewed for 2000 ms/);
    await waitFor('op-c to lead', async () => (await holder()) === 'op-c', 20_000);
    const acquired = logged(c, 'Acquired the lease')[0];
    // Same machine, same clock: op-b's last word came before op-c's first write.
    expect(Date.parse(String(acquired?.time))).toBeGreaterThan(Date.parse(String(lost?.time)));
    const lastWriteOfB = Math.max(...WRITES.flatMap((m) => logged(b, m)).map((l) => Date.parse(String(l.time))));
    expect(lastWriteOfB).toBeLessThan(Date.parse(String(acquired?.time)));
    await inst.kubectlOk(['apply', '-f', '-'], apiKeyDoc('third'));
    await served('third');
  });

  it('a leader stopped with SIGTERM hands the lease over at once instead of letting it expire', async () => {
    const d = await replica('op-d');
    const stoppedAt = Date.now();
    expect(await ops['op-c']!.kill('SIGTERM')).toBe(0);
    await waitFor('op-d to lead', async () => (await holder()) === 'op-d', LONG_LEASE_MS / 2, 10);
    const acquired = Date.parse(String(logged(d, 'Acquired the lease')[0]?.time));
    expect(logged(ops['op-c']!, 'Released the lease')).toHaveLength(1);
    const released = Date.parse(String(logged(ops['op-c']!, 'Released the lease')[0]?.time));
    const handover = acquired - released;
    process.stdout.write(`SIGTERM handover: the leader released ${released - stoppedAt} ms after it was told to stop; the standby led ${handover} ms later\n`);
    // From the release (the leader's shutdown takes its own time on a busy machine), well within op-c's lease of a
    // minute: the standby did not have to wait for the lease to expire.
    expect(handover).toBeGreaterThanOrEqual(0);
    expect(handover).toBeLessThan(LONG_LEASE_MS / 2);
    expect(await d.metric('svc_operator_leader')).toBe(1);
  }, 120_000);
});

describe('RBAC', () => {
  it('the Role grants nothing beyond its namespace, and no deletes', async () => {
    const can = async (...args: string[]): Promise<string> =>
      (await kubectl(cluster.cp, ['auth', 'can-i', `--as=${serviceAccountUser(inst.ns, 'op-d')}`, ...args])).stdout.trim();
    expect(await can('list', 'secrets', '-n', inst.ns)).toBe('yes');
    expect(await can('patch', 'apikeys.gateway.svc.dev/status', '-n', inst.ns)).toBe('yes');
    expect(await can('list', 'secrets', '-n', 'default')).toBe('no');
    expect(await can('delete', 'apikeys.gateway.svc.dev', '-n', inst.ns)).toBe('no');
    expect(await can('update', 'apikeys.gateway.svc.dev', '-n', inst.ns)).toBe('no');
    expect(await can('delete', 'secrets', '-n', inst.ns)).toBe('no');
    expect(await can('update', 'leases.coordination.k8s.io/someone-else', '-n', inst.ns)).toBe('no');
    expect(await can('list', 'namespaces')).toBe('no');
  });
});
