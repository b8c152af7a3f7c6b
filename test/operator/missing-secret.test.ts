// A ModelRoute target whose credentials Secret (or the key in it) is missing is not served, on a real API server
// with a real Redis: the route's other target serves, a route with no target left answers 503
// no_target_available, the status names the missing Secret, and creating the Secret brings the target in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import type { GatewayProcess } from '../helpers/process.ts';
import { gatewayReady, install, startCluster, type Cluster, type Installation } from './harness.ts';
import { getCustom, secretKey, waitFor, type ApiKeyObject } from './kube-api.ts';

let cluster: Cluster;
let inst: Installation;
let a: FakeUpstream;
let b: FakeUpstream;
let key: string;

const API = 'gateway.svc.dev/v1alpha1';
const doc = (kind: string, name: string, spec: object): string => JSON.stringify({ apiVersion: API, kind, metadata: { name }, spec });
const target = (name: string, up: FakeUpstream, secret: string): object => ({
  name,
  provider: 'openai',
  baseUrl: up.baseUrl,
  credentials: { secretKeyRef: { name: secret, key: 'apiKey' } },
});

beforeAll(async () => {
  [cluster, a, b] = await Promise.all([startCluster('creds'), startFakeUpstream('upstream-a'), startFakeUpstream('upstream-b')]);
  inst = await install(cluster, 'creds');
  await inst.startOperator('op-0');
  await inst.startGateway();
  await inst.kubectlOk(['create', 'secret', 'generic', 'b-creds', '--from-literal=apiKey=token-b']);
  await inst.kubectlOk(
    ['apply', '-f', '-'],
    [
      doc('Plan', 'pro', { tier: 1 }),
      doc('Account', 'acme', { planRef: 'pro' }),
      doc('ApiKey', 'caller', { accountRef: 'acme' }),
      // Target a names a Secret that does not exist yet.
      doc('ModelRoute', 'split', { pricing: { inputPerMTokUsd: 1 }, targets: [target('a', a, 'a-creds'), target('b', b, 'b-creds')] }),
      doc('ModelRoute', 'lonely', { pricing: { inputPerMTokUsd: 1 }, targets: [target('a', a, 'a-creds')] }),
    ].join('\n---\n'),
  );
  key = await waitFor('the generated key', () => secretKey(cluster.api, inst.ns, 'caller-key'));
  await gatewayReady(gw(), 20_000, () => inst.operators[0]?.output() ?? '');
}, 120_000);

afterAll(async () => {
  await inst?.stop();
  await Promise.allSettled([cluster?.stop(), a?.close(), b?.close()]);
});

const gw = (): GatewayProcess => {
  const g = inst.gateways[0];
  if (!g) throw new Error('no gateway');
  return g;
};

interface Call {
  status: number;
  upstream: string | null;
  code: string | undefined;
}

async function call(model: string): Promise<Call> {
  const res = await fetch(`${gw().url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });
  const body = (await res.json()) as { error?: { code?: string } };
  return { status: res.status, upstream: res.headers.get('x-svc-upstream'), code: body.error?.code };
}

type RouteStatus = { reason: string; status: string; message: string; observedGeneration?: number } | undefined;
const routeReady = async (name: string): Promise<RouteStatus> =>
  (await getCustom<ApiKeyObject>(cluster.api, inst.ns, 'modelroutes', name))?.status?.conditions?.find((c) => c.type === 'Ready');

describe('a target whose credentials Secret is missing', () => {
  it('is left out: the route is served by its other target only, and its status names the missing Secret', async () => {
    await waitFor('split served', async () => (await call('split')).status === 200, 20_000, 50);
    const calls = await Promise.all(Array.from({ length: 12 }, () => call('split')));
    expect(calls.map((c) => [c.status, c.upstream])).toEqual(calls.map(() => [200, 'b']));
    expect(a.calls).toHaveLength(0);
    expect(b.calls.at(-1)?.headers.authorization).toBe('Bearer token-b');
    const ready = await waitFor('split MissingSecret', async () => {
      const r = await routeReady('split');
      return r?.reason === 'MissingSecret' ? r : undefined;
    });
    expect(ready).toMatchObject({
      status: 'False',
      message: `Target a: Secret a-creds does not exist in namespace ${inst.ns}. It is left out: 1 of 2 targets serve model split.`,
    });
  });

  it('leaves a route with no other target answering 503 no_target_available, and Ready=False says why', async () => {
    const c = await call('lonely');
    expect(c).toMatchObject({ status: 503, code: 'no_target_available' });
    expect(a.calls).toHaveLength(0);
    const ready = await waitFor('lonely MissingSecret', async () => {
      const r = await routeReady('lonely');
      return r?.reason === 'MissingSecret' ? r : undefined;
    });
    expect(ready).toMatchObject({
      status: 'False',
      message: `Target a: Secret a-creds does not exist in namespace ${inst.ns}. No target is left: calls to model lonely get 503 no_target_available.`,
    });
  });

  it('is still left out while the Secret lacks the key (MissingSecretKey), and served once the key is there', async () => {
    await inst.kubectlOk(['create', 'secret', 'generic', 'a-creds', '--from-literal=token=token-a']);
    await waitFor('lonely MissingSecretKey', async () => (await routeReady('lonely'))?.reason === 'MissingSecretKey');
    expect(await call('lonely')).toMatchObject({ status: 503, code: 'no_target_available' });
    expect(a.calls).toHaveLength(0);

    await inst.kubectlOk(['patch', 'secret', 'a-creds', '--type=merge', '-p', JSON.stringify({ stringData: { apiKey: 'token-a' } })]);
    await waitFor('lonely served', async () => (await call('lonely')).status === 200, 20_000, 50);
    expect(await call('lonely')).toMatchObject({ status: 200, upstream: 'a' });
    expect(a.calls.at(-1)?.headers.authorization).toBe('Bearer token-a');
    for (const name of ['lonely', 'split']) {
      await waitFor(`${name} Ready`, async () => (await routeReady(name))?.status === 'True');
    }
    expect(await routeReady('split')).toMatchObject({ reason: 'Accepted', message: 'Model split is published to the gateways with 2 target(s).' });
    const upstreams = new Set((await Promise.all(Array.from({ length: 20 }, () => call('split')))).map((c) => c.upstream));
    expect(upstreams).toEqual(new Set(['a', 'b']));
  });
});
