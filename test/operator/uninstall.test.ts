// What the chart's uninstall hook runs (node operator/uninstall.ts), on a real kube-apiserver and Redis: the operator
// Deployment scaled to 0; every ApiKey released, so that deleting one does not wait for an operator that is gone (one
// already being deleted has its key revoked first); no key admitted until an operator publishes again; and a
// re-install serves the same keys (the uninstall revokes none). The operator and gateway are processes here, the
// Deployment has no pods (no kubelet): test/e2e/node.test.ts runs the hook as helm runs it, on a real node.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../gateway/contract/keys.ts';
import { chat } from '../helpers/fleet.ts';
import { ROOT } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';
import { apiKey, basics, route, toYaml } from '../helpers/manifests.ts';
import { gatewayReady, install, PEPPER, startCluster, type Cluster, type Installation } from './harness.ts';
import { getCustom, type ApiKeyObject } from './kube-api.ts';

let cluster: Cluster;
let inst: Installation;
const MODEL = 'mock-fast';

const OPERATOR_DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'svc-operator' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'svc-operator' } },
    template: { metadata: { labels: { app: 'svc-operator' } }, spec: { containers: [{ name: 'operator', image: 'svc-gateway:test' }] } },
  },
};

function runUninstall(): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['operator/uninstall.ts'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        KUBECONFIG: cluster.cp.kubeconfig,
        WATCH_NAMESPACE: inst.ns,
        SVC_OPERATOR_DEPLOYMENT: 'svc-operator',
        SVC_OPERATOR_SELECTOR: 'app=svc-operator',
        REDIS_URL: cluster.redis.url,
        SVC_REDIS_PREFIX: inst.prefix,
        ...(cluster.redis.cluster ? { SVC_REDIS_CLUSTER: '1' } : {}),
      },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('close', (code) => resolve({ code, out }));
  });
}

const status = async (key: string): Promise<number> => (await chat(inst.gateways[0]?.url ?? '', key, { model: MODEL })).status;

beforeAll(async () => {
  cluster = await startCluster('uninst');
  inst = await install(cluster, 'uninst');
  await inst.startOperator('op-0');
  await inst.startGateway();
  await gatewayReady(inst.gateways[0] as NonNullable<(typeof inst.gateways)[0]>, 20_000, () => inst.operators[0]?.output() ?? '');
}, 120_000);

afterAll(async () => {
  await inst?.stop();
  await cluster?.stop();
});

describe('node operator/uninstall.ts (the chart pre-delete hook)', () => {
  let kept = '';
  let doomed = '';
  let doomedHmac = '';

  it('releases every ApiKey: one being deleted goes (its key revoked), the others stay without the finalizer, and no key is admitted', async () => {
    const b = basics();
    const other = apiKey('doomed', 'acme');
    const docs = [...b.docs, ...other.docs, route(MODEL, [{ name: 'mock', provider: 'mock' }]), OPERATOR_DEPLOYMENT];
    // Secrets first: the operator would otherwise generate a key into a Secret the apply then cannot create.
    const isSecret = (d: object): boolean => (d as { kind: string }).kind === 'Secret';
    await inst.kubectlOk(['apply', '-f', '-'], toYaml([...docs.filter(isSecret), ...docs.filter((d) => !isSecret(d))]));
    kept = b.keys.builder;
    doomed = other.key;
    doomedHmac = hashKey(doomed, PEPPER);
    await until(async () => (await status(kept)) === 200 && (await status(doomed)) === 200, 30_000, 'both keys answer 200', 100);

    // The operator gone first (in a cluster the hook scales it to 0 and waits for its pods): a delete now waits.
    await inst.operators[0]?.kill('SIGTERM');
    await inst.kubectlOk(['delete', 'apikey', 'doomed', '--wait=false']);
    expect((await getCustom<ApiKeyObject>(cluster.api, inst.ns, 'apikeys', 'doomed'))?.metadata.finalizers).toEqual(['gateway.svc.dev/revoke-key']);

    const r = await runUninstall();
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('Released the ApiKeys for the uninstall');
    const scale = JSON.parse(await inst.kubectlOk(['get', 'deployment', 'svc-operator', '-o', 'json'])) as { spec: { replicas: number } };
    expect(scale.spec.replicas).toBe(0);
    expect(await getCustom(cluster.api, inst.ns, 'apikeys', 'doomed')).toBeUndefined();
    const left = await getCustom<ApiKeyObject>(cluster.api, inst.ns, 'apikeys', 'builder-key');
    expect(left?.metadata.finalizers ?? []).toEqual([]);
    expect(await cluster.redis.client.hget(`${inst.prefix}:key:${doomedHmac}`, 'revoked')).toBe('1');
    await until(async () => (await status(kept)) === 401 && (await status(doomed)) === 401, 30_000, 'both keys answer 401', 100);
  }, 120_000);

  it('revokes nothing else: a re-install serves the kept key again, the deleted one stays revoked', async () => {
    await inst.startOperator('op-1');
    await until(async () => (await status(kept)) === 200, 30_000, 'the kept key answers 200 after the re-install', 100);
    expect(await status(doomed)).toBe(401);
  }, 60_000);
});
