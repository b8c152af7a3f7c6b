// Acceptance on a real kube-apiserver and a real Redis: `kubectl apply` drives every gateway replica. The operator
// runs as a process under a ServiceAccount bound to operator/rbac/role.yaml; the gateways (node gateway/main.ts
// --cluster) read only Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../gateway/contract/keys.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { chat, me } from '../helpers/fleet.ts';
import { docExample } from '../helpers/docs.ts';
import { gatewayReady, install, startCluster, type Cluster, type Installation } from './harness.ts';
import { getCustom, ready, secretKey, waitFor, type ApiKeyObject } from './kube-api.ts';
import { untilAll } from './propagation.ts';

/** Waits for a state on every gateway: a bound only a hang exceeds. How fast it gets there is measured by
 * test/bench/propagation.test.ts (npm run test:bench), never asserted here: a loaded machine is slow, not wrong. */
const HANG_MS = 30_000;

let cluster: Cluster;
let inst: Installation;
let upstream: FakeUpstream;
/** The target an edited route moves to (kept up to the end: later tests call the edited route). */
let other: FakeUpstream;
const MODEL = 'gpt-4o-mini';

beforeAll(async () => {
  [cluster, upstream, other] = await Promise.all([startCluster('life'), startFakeUpstream('openai-a'), startFakeUpstream('openai-b')]);
  inst = await install(cluster, 'life');
  // The default spend refresh (a minute): the balance of a new account shows by the early refresh after a publish.
  await inst.startOperator('op-0');
  await Promise.all([inst.startGateway(), inst.startGateway()]);
  await Promise.all(inst.gateways.map((g) => gatewayReady(g, 60_000, () => inst.operators[0]?.output() ?? '')));
}, 120_000);

afterAll(async () => {
  await inst?.stop();
  await Promise.allSettled([cluster?.stop(), upstream?.close(), other?.close()]);
});

const urls = (): string[] => inst.gateways.map((g) => g.url);
const apiKey = (name: string): Promise<ApiKeyObject | undefined> => getCustom(cluster.api, inst.ns, 'apikeys', name);

describe('kubectl apply of the example of docs/kubernetes.md', () => {
  let key: string;

  it('is served by every gateway, with the key the operator generated into the Secret', async () => {
    const yaml = docExample('docs/kubernetes.md', 'operator').replace('https://api.openai.com/v1', upstream.baseUrl);
    await inst.kubectlOk(['apply', '-f', '-'], yaml);
    key = await waitFor('the generated key in Secret ci-bot-key', () => secretKey(cluster.api, inst.ns, 'ci-bot-key'), HANG_MS);
    await untilAll(urls(), (url) => chat(url, key, { model: MODEL }).then((r) => r.status === 200), HANG_MS);
    expect(upstream.calls.at(-1)?.headers.authorization).toBe('Bearer sk-your-openai-key');
  });

  it('shows the displayed key and the state in kubectl get apikeys, never the key', async () => {
    await waitFor('status Active', async () => (await apiKey('ci-bot'))?.status?.state === 'Active');
    const row = (await inst.kubectlOk(['get', 'apikeys', '--no-headers'])).trim().split(/\s+/);
    expect(row.slice(0, 5)).toEqual(['ci-bot', 'Active', `sk-svc-…${key.slice(-4)}`, 'acme', '25']);
    const everything = await inst.kubectlOk(['get', 'apikey', 'ci-bot', '-o', 'yaml']);
    expect(everything).not.toContain(key.slice(7, -4));
    const obj = await apiKey('ci-bot');
    expect(obj?.status).toMatchObject({ secretName: 'ci-bot-key', displayedKey: `sk-svc-…${key.slice(-4)}` });
    expect(ready(obj)).toMatchObject({ status: 'True', reason: 'Active', observedGeneration: obj?.metadata.generation });
    expect(obj?.metadata.finalizers).toEqual(['gateway.svc.dev/revoke-key']);
  });

  it('owns the generated Secret, so it goes with the ApiKey', async () => {
    const s = await cluster.api.core.readNamespacedSecret({ name: 'ci-bot-key', namespace: inst.ns });
    const obj = await apiKey('ci-bot');
    expect(s.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'ApiKey', name: 'ci-bot', uid: obj?.metadata.uid, controller: true })]);
  });

  it('marks every object Ready and shows the account balance', async () => {
    const header = async (r: string): Promise<string> => (await inst.kubectlOk(['get', r, '--no-headers'])).trim();
    // 51 USD credited, less the fraction of a cent the calls above cost (SPEND, then BALANCE, to the cent).
    const [spend, balance] = await waitFor('account spend and balance', async () => {
      const m = /^acme\s+builder\s+(\d+\.\d\d)\s+(\d+\.\d\d)\s+/.exec(await header('accounts'));
      return m ? [Number(m[1]), Number(m[2])] : undefined;
    });
    expect(spend).toBeLessThanOrEqual(0.01);
    expect(balance).toBeGreaterThanOrEqual(50.99);
    expect(balance).toBeLessThanOrEqual(51);
    expect(await header('plans')).toMatch(/^builder\s+2\s+true\s+600\s+200000\s+True\s+/);
    expect(await header('modelroutes')).toMatch(/^gpt-4o-mini\s+chat\s+0\s+0\.156\s+0\.624\s+True\s+/);
  });

  it('records a KeyGenerated event', async () => {
    const events = await inst.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.name=ci-bot', '-o', 'jsonpath={.items[*].reason}']);
    expect(events.split(' ')).toContain('KeyGenerated');
  });

  it('revocation reaches every gateway; un-revoking is refused by the API server', async () => {
    await inst.kubectlOk(['patch', 'apikey', 'ci-bot', '--type=merge', '-p', '{"spec":{"revoked":true}}']);
    await untilAll(urls(), (url) => chat(url, key, { model: MODEL }).then((r) => r.status === 401 && r.body.includes('key_revoked')), HANG_MS);
    const back = await inst.kubectl(['patch', 'apikey', 'ci-bot', '--type=merge', '-p', '{"spec":{"revoked":false}}']);
    expect(back.code).not.toBe(0);
    expect(back.stderr.trimEnd()).toBe(
      'The ApiKey "ci-bot" is invalid: spec.revoked: Invalid value: "boolean": a revoked ApiKey cannot be un-revoked; create a new ApiKey instead',
    );
    const obj = await waitFor('status Revoked', async () => {
      const o = await apiKey('ci-bot');
      return o?.status?.state === 'Revoked' ? o : undefined;
    });
    expect(obj.status?.revokedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(ready(obj)).toMatchObject({ reason: 'Revoked', observedGeneration: obj.metadata.generation });
    const events = await inst.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.name=ci-bot', '-o', 'jsonpath={.items[*].reason}']);
    expect(events.split(' ')).toContain('KeyRevoked');
  });
});

describe('editing a ModelRoute', () => {
  it('moves every gateway to the new target and price, without a restart', async () => {
    await inst.kubectlOk(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'gateway.svc.dev/v1alpha1',
        kind: 'ApiKey',
        metadata: { name: 'editor' },
        spec: { accountRef: 'acme' },
      }),
    );
    const key = await waitFor('key', () => secretKey(cluster.api, inst.ns, 'editor-key'));
    await untilAll(urls(), (url) => chat(url, key, { model: MODEL }).then((r) => r.status === 200));
    const read = async (): Promise<number> => Number((await me(urls()[0] as string, key)).body.month_spend_usd);
    // A call's settle lands just after its answer: read the spend once it has stopped moving (bounded).
    const spend = async (): Promise<number> => {
      let last = await read();
      for (let i = 0; i < 50; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const now = await read();
        if (now === last) return now;
        last = now;
      }
      return last;
    };
    const before = await spend();
    await chat(urls()[0] as string, key, { model: MODEL });
    expect((await spend()) - before).toBeCloseTo(0.000006084, 10); // 11 x 0.156 + 7 x 0.624 per million tokens

    await inst.kubectlOk([
      'patch',
      'modelroute',
      MODEL,
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: {
          pricing: { inputPerMTokUsd: 10.4, outputPerMTokUsd: 20.8 },
          targets: [
            { name: 'openai-b', provider: 'openai', baseUrl: other.baseUrl, credentials: { secretKeyRef: { name: 'openai-upstream', key: 'apiKey' } } },
          ],
        },
      }),
    ]);
    await untilAll(urls(), (url) => fetchUpstream(url, key).then((u) => u === 'openai-b'), HANG_MS);
    const mid = await spend();
    await chat(urls()[0] as string, key, { model: MODEL });
    expect((await spend()) - mid).toBeCloseTo(0.00026, 10); // 11 x 10.4 + 7 x 20.8 per million tokens
    for (const g of inst.gateways) expect(g.child.exitCode).toBeNull();
  });
});

async function fetchUpstream(url: string, key: string): Promise<string | null> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });
  await res.text();
  return res.headers.get('x-svc-upstream');
}

describe('status conditions', () => {
  it('say why a key is not served, and turn Ready when the missing objects appear', async () => {
    const doc = (kind: string, name: string, spec: object): string =>
      JSON.stringify({ apiVersion: 'gateway.svc.dev/v1alpha1', kind, metadata: { name }, spec });
    await inst.kubectlOk(['apply', '-f', '-'], doc('ApiKey', 'orphan', { accountRef: 'nobody' }));
    const reason = (name: string, plural = 'apikeys'): Promise<string | undefined> =>
      getCustom(cluster.api, inst.ns, plural, name).then((o) => ready(o)?.reason);
    await waitFor('UnknownAccount', async () => (await reason('orphan')) === 'UnknownAccount');
    expect((await apiKey('orphan'))?.status?.conditions?.[0]?.message).toBe(`Account nobody does not exist in namespace ${inst.ns}.`);

    await inst.kubectlOk(['apply', '-f', '-'], doc('Account', 'nobody', { planRef: 'gold' }));
    await waitFor('UnknownPlan on the key', async () => (await reason('orphan')) === 'UnknownPlan');
    await waitFor('UnknownPlan on the account', async () => (await reason('nobody', 'accounts')) === 'UnknownPlan');

    await inst.kubectlOk(['apply', '-f', '-'], doc('Plan', 'gold', { tier: 3 }));
    await waitFor('Active', async () => (await reason('orphan')) === 'Active');
    const key = await waitFor('key', () => secretKey(cluster.api, inst.ns, 'orphan-key'));
    expect((await chat(urls()[1] as string, key, { model: MODEL })).status).toBe(200);
    const warnings = await inst.kubectlOk([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=orphan,type=Warning',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    expect(warnings.split(' ').sort()).toEqual(['UnknownAccount', 'UnknownPlan']);
  });

  it('report a malformed key in a named Secret (MalformedKey) and a route whose credentials are missing (MissingSecret)', async () => {
    await inst.kubectlOk(['create', 'secret', 'generic', 'bad-key', '--from-literal=key=sk-svc-not-a-real-key']);
    await inst.kubectlOk(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'gateway.svc.dev/v1alpha1',
        kind: 'ApiKey',
        metadata: { name: 'bad' },
        spec: { accountRef: 'acme', secretName: 'bad-key' },
      }),
    );
    await inst.kubectlOk(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'gateway.svc.dev/v1alpha1',
        kind: 'ModelRoute',
        metadata: { name: 'no-creds' },
        spec: {
          pricing: { inputPerMTokUsd: 1 },
          targets: [{ name: 't', provider: 'openai', baseUrl: upstream.baseUrl, credentials: { secretKeyRef: { name: 'absent', key: 'k' } } }],
        },
      }),
    );
    await waitFor('MalformedKey', async () => ready(await apiKey('bad'))?.reason === 'MalformedKey');
    await waitFor('MissingSecret', async () => ready(await getCustom(cluster.api, inst.ns, 'modelroutes', 'no-creds'))?.reason === 'MissingSecret');
    // The operator never overwrites a Secret it was pointed at.
    expect(await secretKey(cluster.api, inst.ns, 'bad-key')).toBe('sk-svc-not-a-real-key');
  });
});

describe('a key brought in a Secret (GitOps)', () => {
  it("is used as is, and the Secret stays the user's", async () => {
    const key = generateKey();
    await inst.kubectlOk(['create', 'secret', 'generic', 'sealed', `--from-literal=key=${key}`]);
    await inst.kubectlOk(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'gateway.svc.dev/v1alpha1',
        kind: 'ApiKey',
        metadata: { name: 'gitops' },
        spec: { accountRef: 'acme', secretName: 'sealed' },
      }),
    );
    await untilAll(urls(), (url) => chat(url, key, { model: MODEL }).then((r) => r.status === 200));
    const s = await cluster.api.core.readNamespacedSecret({ name: 'sealed', namespace: inst.ns });
    expect(s.metadata?.ownerReferences).toBeUndefined();
    expect(await secretKey(cluster.api, inst.ns, 'sealed')).toBe(key);
  });
});

describe('deleting an ApiKey', () => {
  it('revokes the key in Redis first (finalizer); the key stays revoked even if its Secret is reused', async () => {
    const key = generateKey();
    await inst.kubectlOk(['create', 'secret', 'generic', 'temp-key', `--from-literal=key=${key}`]);
    const manifest = JSON.stringify({ apiVersion: 'gateway.svc.dev/v1alpha1', kind: 'ApiKey', metadata: { name: 'temp' }, spec: { accountRef: 'acme' } });
    await inst.kubectlOk(['apply', '-f', '-'], manifest);
    await untilAll(urls(), (url) => chat(url, key, { model: MODEL }).then((r) => r.status === 200));
    await inst.kubectlOk(['delete', 'apikey', 'temp', '--wait=true', '--timeout=20s']);
    for (const url of urls()) expect((await chat(url, key, { model: MODEL })).status).toBe(401);
    // An old manifest applied again: same name, same Secret. Revocation is irreversible, so it stays refused.
    await inst.kubectlOk(['apply', '-f', '-'], manifest);
    await waitFor('KeyRevokedBefore', async () => ready(await apiKey('temp'))?.reason === 'KeyRevokedBefore');
    for (const url of urls()) expect((await chat(url, key, { model: MODEL })).status).toBe(401);
  });
});

describe('the config channel', () => {
  it('gateways keep their last good snapshot when one has a schema they do not understand', async () => {
    const r = cluster.redis.client;
    const current = await r.get(`${inst.prefix}:config:current`);
    await r.set(`${inst.prefix}:config:snapshots:from-the-future`, JSON.stringify({ schema: 2, version: 'from-the-future' }));
    await r.set(`${inst.prefix}:config:current`, 'from-the-future');
    await r.publish(`${inst.prefix}:config:changed`, 'from-the-future');
    const key = await waitFor('key', () => secretKey(cluster.api, inst.ns, 'editor-key'));
    await new Promise((res) => setTimeout(res, 300));
    for (const url of urls()) {
      expect((await chat(url, key, { model: MODEL })).status).toBe(200);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    }
    for (const g of inst.gateways) expect(g.output()).toContain('Ignored config version from-the-future: snapshot schema 2 is not understood');
    // The next change the operator publishes moves everyone on.
    await inst.kubectlOk(['patch', 'plan', 'builder', '--type=merge', '-p', '{"spec":{"limits":{"rpm":601}}}']);
    await waitFor('a new version', async () => {
      const v = await r.get(`${inst.prefix}:config:current`);
      return v !== 'from-the-future' && v !== current;
    });
  });
});

describe('the operator process', () => {
  it('serves health, readiness and bounded metrics', async () => {
    const op = inst.operators[0];
    if (!op) throw new Error('no operator');
    const base = `http://127.0.0.1:${op.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(await op.metric('svc_operator_leader')).toBe(1);
    expect(await op.metric('svc_operator_config_publish_total')).toBeGreaterThan(0);
    expect(await op.metric('svc_operator_reconcile_total', { kind: 'ApiKey', result: 'success' })).toBeGreaterThan(0);
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toContain('svc_operator_reconcile_duration_seconds_bucket{le="0.005",kind="ApiKey"}');
    expect(text).not.toMatch(/ci-bot|orphan|sk-svc-/);
  });

  it('never logs a key', async () => {
    const key = await secretKey(cluster.api, inst.ns, 'editor-key');
    const op = inst.operators[0];
    expect(op?.output()).not.toContain((key ?? 'missing').slice(7, -4));
    expect(op?.output()).toContain('"msg":"Generated key"');
  });
});

describe('a gateway started before the operator', () => {
  it('is not ready and answers 503 until the first snapshot arrives', async () => {
    const late = await install(cluster, 'late');
    try {
      const gw = await late.startGateway();
      expect((await fetch(`${gw.url}/readyz`)).status).toBe(503);
      const early = await fetch(`${gw.url}/v1/models`);
      expect(early.status).toBe(503);
      expect(early.headers.get('retry-after')).toBe('2');
      await late.startOperator('late-op');
      await gatewayReady(gw);
    } finally {
      await late.stop();
    }
  });
});
