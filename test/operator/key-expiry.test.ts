// Key expiry through the operator on a real kube-apiserver and Redis (README: Keys, expiry and rotation): the Account
// keyPolicy refuses a key without expiry (the message names the policy) and caps its life; `kubectl get apikeys`
// shows AGE and EXPIRES; 14 days before the expiry an Event and svc_gateway_keys_expiring{account}; an expiry moved
// into the past stops the key on the gateway at once (401 key_expired) and the status says Expired.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat } from '../helpers/fleet.ts';
import { gatewayReady, install, startCluster, type Cluster, type Installation } from './harness.ts';
import { getCustom, ready, secretKey, waitFor, type ApiKeyObject } from './kube-api.ts';

let cluster: Cluster;
let inst: Installation;
const DAY = 86_400_000;
/** Waits on a machine shared by many test runs: generous, since only the outcome is asserted. */
const SLOW = 60_000;

const base = `apiVersion: gateway.svc.dev/v1alpha1
kind: Plan
metadata: {name: builder}
spec: {tier: 2}
---
apiVersion: gateway.svc.dev/v1alpha1
kind: Account
metadata: {name: acme}
spec:
  planRef: builder
  credits: [{id: c1, amountUsd: 10}]
  keyPolicy: {maxKeyAgeDays: 30, requireExpiry: true}
---
apiVersion: gateway.svc.dev/v1alpha1
kind: ModelRoute
metadata: {name: mock-fast}
spec:
  pricing: {inputPerMTokUsd: 1, outputPerMTokUsd: 2}
  targets: [{name: mock-a, provider: mock}]
`;

function apiKeyYaml(name: string, expiresAt?: string): string {
  return `apiVersion: gateway.svc.dev/v1alpha1
kind: ApiKey
metadata: {name: ${name}}
spec:
  accountRef: acme
${expiresAt ? `  expiresAt: "${expiresAt}"\n` : ''}`;
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
type KeyObject = ApiKeyObject & { metadata: { creationTimestamp?: string }; status?: { expiresAt?: string; expiringSoon?: boolean } };
const apiKey = (name: string): Promise<KeyObject | undefined> => getCustom<KeyObject>(cluster.api, inst.ns, 'apikeys', name);

beforeAll(async () => {
  cluster = await startCluster('expiry');
  inst = await install(cluster, 'expiry');
  // Default lease timings: this test is about expiry, not failover (a loaded machine must not cost the lease).
  await inst.startOperator('op-0', { SVC_LEASE_DURATION_MS: '15000', SVC_LEASE_RENEW_DEADLINE_MS: '10000', SVC_LEASE_RETRY_PERIOD_MS: '2000' });
  await inst.startGateway();
  await inst.kubectlOk(['apply', '-f', '-'], base);
  await gatewayReady(inst.gateways[0] as NonNullable<Installation['gateways'][0]>, 60_000, () => inst.operators[0]?.output() ?? '');
}, 180_000);

afterAll(async () => {
  await inst?.stop();
  await cluster?.stop();
});

describe('key expiry in a cluster', () => {
  it('refuses a key without expiry under keyPolicy.requireExpiry, naming the policy', { timeout: 120_000 }, async () => {
    await inst.kubectlOk(['apply', '-f', '-'], apiKeyYaml('no-expiry'));
    const cond = await waitFor(
      'KeyPolicy condition',
      async () => {
        const c = ready(await apiKey('no-expiry'));
        return c?.reason === 'KeyPolicy' ? c : undefined;
      },
      SLOW,
    );
    expect(cond.status).toBe('False');
    const obj = await apiKey('no-expiry');
    const message = obj?.status?.conditions?.find((c) => c.type === 'Ready')?.message;
    expect(message).toBe(
      'Account acme has keyPolicy.requireExpiry: set spec.expiresAt on this key (RFC 3339, at most 30 days after its creation); until then no gateway accepts it.',
    );
    const events = await inst.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.name=no-expiry', '-o', 'jsonpath={.items[*].reason}']);
    expect(events.split(' ')).toContain('KeyPolicy');
  });

  it('caps a key at maxKeyAgeDays; 14 days before its expiry: EXPIRES column, an Event, svc_gateway_keys_expiring{account}', { timeout: 180_000 }, async () => {
    await inst.kubectlOk(['apply', '-f', '-'], apiKeyYaml('long', iso(Date.now() + 100 * DAY)));
    await inst.kubectlOk(['apply', '-f', '-'], apiKeyYaml('soon', iso(Date.now() + 10 * DAY)));
    const long = await waitFor('long Active', async () => ((await apiKey('long'))?.status?.state === 'Active' ? apiKey('long') : undefined), SLOW);
    expect(long?.status?.expiresAt).toBe(iso(Date.parse(long?.metadata.creationTimestamp ?? '') + 30 * DAY));
    expect(long?.status?.expiringSoon).toBeUndefined();
    const soon = await waitFor('soon Active', async () => ((await apiKey('soon'))?.status?.expiringSoon === true ? apiKey('soon') : undefined), SLOW);
    expect(soon?.status?.state).toBe('Active');
    const table = await inst.kubectlOk(['get', 'apikeys', 'soon']);
    const [head, row] = table.trim().split('\n');
    expect(head?.split(/\s+/)).toEqual(['NAME', 'STATE', 'KEY', 'ACCOUNT', 'BUDGET', 'SPEND', 'BUDGET%', 'AGE', 'EXPIRES']);
    expect(row?.split(/\s+/).at(-1)).toBe(soon?.status?.expiresAt);
    expect(row?.split(/\s+/).at(-2)).toMatch(/^\d+s$/);
    const events = await inst.kubectlOk([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=soon',
      '-o',
      'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}',
    ]);
    expect(events).toContain(`KeyExpiringSoon: The key expires at ${soon?.status?.expiresAt as string} (in 9 days)`);
    const metrics = await (await fetch(`http://127.0.0.1:${inst.operators[0]?.port}/metrics`)).text();
    expect(metrics).toContain('svc_gateway_keys_expiring{account="acme"} 1');
    // The key works until then, and tells the client how long it has.
    const key = await secretKey(cluster.api, inst.ns, 'soon-key');
    const r = await waitFor(
      'soon served',
      async () => {
        const c = await chat(inst.gateways[0]?.url as string, key as string, { model: 'mock-fast' });
        return c.status === 200 ? c : undefined;
      },
      SLOW,
    );
    expect(r.status).toBe(200);
  });

  it('stops the key at once when its expiry is moved into the past: 401 key_expired, status Expired', { timeout: 120_000 }, async () => {
    const key = (await secretKey(cluster.api, inst.ns, 'soon-key')) as string;
    const url = inst.gateways[0]?.url as string;
    expect((await chat(url, key, { model: 'mock-fast' })).status).toBe(200);
    await inst.kubectlOk(['patch', 'apikey', 'soon', '--type', 'merge', '-p', JSON.stringify({ spec: { expiresAt: iso(Date.now() - 60_000) } })]);
    const refused = await waitFor(
      'key_expired',
      async () => {
        const c = await chat(url, key, { model: 'mock-fast' });
        return c.status === 401 ? c : undefined;
      },
      SLOW,
    );
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'key_expired' } });
    const obj = await waitFor('status Expired', async () => ((await apiKey('soon'))?.status?.state === 'Expired' ? apiKey('soon') : undefined), SLOW);
    expect(ready(obj)).toMatchObject({ status: 'False', reason: 'Expired' });
    const metrics = await (await fetch(`http://127.0.0.1:${inst.operators[0]?.port}/metrics`)).text();
    expect(metrics).toContain('svc_gateway_keys_expiring{account="acme"} 0');
  });
});
