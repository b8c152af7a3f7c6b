// The console in cluster mode on a real kube-apiserver, a real Redis, the real operator and a cluster-mode gateway:
// sign-in by TokenReview, rights by SubjectAccessReview (two users with different Roles), keys as ApiKey objects
// written by the console's own least-privilege ServiceAccount, carrying only the key's HMAC and the creator; the
// revocation reaches the gateway.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PEPPER, gatewayReady, install, startCluster, type Cluster, type Installation } from '../operator/harness.ts';
import { waitFor } from '../operator/kube-api.ts';
import { kubectl, kubectlOk } from '../k8s/kubectl.ts';
import { accountUser, consoleIdentity, CONSOLE_SA, tokenFor } from './cluster-identity.ts';
import { docExample } from '../helpers/docs.ts';
import { startConsoleProcess, type ConsoleProcess } from './console-process.ts';
import { expectAccessible, launchBrowser } from './browser.ts';
import { occurrences, redisText } from './secrets.ts';

const API = 'gateway.svc.dev/v1alpha1';
const TEAM_A = 'team-a-dev';
const MANIFESTS = [
  { apiVersion: API, kind: 'Plan', metadata: { name: 'builder' }, spec: { tier: 2, limits: { rpm: 600, tpm: 200000 } } },
  { apiVersion: API, kind: 'Account', metadata: { name: 'team-a' }, spec: { planRef: 'builder' } },
  { apiVersion: API, kind: 'Account', metadata: { name: 'team-b' }, spec: { planRef: 'builder' } },
  {
    apiVersion: API,
    kind: 'ModelRoute',
    metadata: { name: 'mock-mini' },
    spec: { pricing: { inputPerMTokUsd: 0.156, outputPerMTokUsd: 0.624 }, targets: [{ name: 'mock', provider: 'mock' }] },
  },
];

let cluster: Cluster;
let inst: Installation;
let console_: ConsoleProcess;
let browser: Browser;
let tokenA: string;
let tokenB: string;
let gatewayUrl: string;
let consoleEnv: Record<string, string>;

beforeAll(async () => {
  [cluster, browser] = await Promise.all([startCluster('console'), launchBrowser()]);
  inst = await install(cluster, 'console');
  await inst.kubectlOk(['apply', '-f', '-'], MANIFESTS.map((m) => JSON.stringify(m)).join('\n---\n'));
  const kubeconfig = await consoleIdentity(cluster.cp, inst.ns);
  // Team A's member is the chart README's example: its ServiceAccount, Role and RoleBinding, applied as written
  // (namespace aside), and the token `kubectl create token` makes for it.
  const access = docExample('charts/svc-gateway/README.md', 'console-access').replaceAll('namespace: svc-gateway', `namespace: ${inst.ns}`);
  await kubectlOk(cluster.cp, ['apply', '-f', '-'], access);
  [tokenA, tokenB] = await Promise.all([tokenFor(cluster.cp, inst.ns, TEAM_A), accountUser(cluster.cp, inst.ns, 'bob', ['team-b'], ['get', 'view-usage'])]);
  await inst.startOperator('op-0');
  const gw = await inst.startGateway();
  await gatewayReady(gw, 30_000, () => inst.operators[0]?.output() ?? '');
  gatewayUrl = gw.url;
  consoleEnv = {
    KUBECONFIG: kubeconfig,
    WATCH_NAMESPACE: inst.ns,
    REDIS_URL: cluster.redis.url,
    SVC_REDIS_PREFIX: inst.prefix,
    SVC_KEY_PEPPER: PEPPER,
    SVC_API_BASE_URL: gatewayUrl,
  };
  console_ = await startConsoleProcess(consoleEnv);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await console_?.stop();
  await inst?.stop();
  await cluster?.stop();
});

async function signIn(token: string): Promise<Page> {
  const context = await browser.newContext();
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  await page.goto(`${console_.url}/dashboard/keys`);
  await page.getByLabel('Kubernetes token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard\/keys/);
  return page;
}

async function chat(key: string): Promise<number> {
  const r = await fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-mini', messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await r.arrayBuffer();
  return r.status;
}

async function apiKeyJson(name: string): Promise<string> {
  return kubectlOk(cluster.cp, ['get', '-n', inst.ns, 'apikey', name, '-o', 'json']);
}

describe('console, cluster mode', () => {
  it('serves / as the Ingress routes it there: the page of links to a browser, the JSON 404 to an API client', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${console_.url}/`);
    const nav = page.getByRole('navigation', { name: 'Where to go' });
    await expect(nav.getByRole('link', { name: 'Console' }).getAttribute('href')).resolves.toBe('/dashboard');
    await expectAccessible(page, 'the landing page');
    const api = await fetch(`${console_.url}/`, { headers: { accept: 'application/json' } });
    expect([api.status, await api.json()]).toEqual([
      404,
      { error: { message: 'No route GET /.', type: 'invalid_request_error', param: null, code: 'not_found' } },
    ]);
  });

  it('refuses a token the API server does not accept', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${console_.url}/dashboard/login`);
    await expectAccessible(page, 'the cluster sign-in page');
    await page.getByLabel('Kubernetes token').fill('not-a-kubernetes-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByText('That token was not accepted.').count()).resolves.toBe(1);
  });

  it('a ServiceAccount token without a Role on accounts signs in, sees no account and is told what to ask for', async () => {
    await kubectlOk(cluster.cp, ['create', 'serviceaccount', '-n', inst.ns, 'no-role']);
    const page = await signIn(await tokenFor(cluster.cp, inst.ns, 'no-role'));
    await expect(page.getByText('You may not see any account. Ask your platform team for a Role on accounts.').count()).resolves.toBe(1);
    expect(await page.content()).not.toMatch(/team-a|team-b/);
  });

  it('a user with manage-keys sees only its account, creates a key carrying only its HMAC and the creator; it reaches the gateway', async () => {
    const page = await signIn(tokenA);
    await expect(page.getByText('Account: team-a').count()).resolves.toBe(1);
    expect(await page.content()).not.toContain('team-b');
    await page.getByLabel('Name', { exact: true }).fill('ci-bot');
    await page.getByLabel('RPM limit').fill('60');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByRole('dialog').getByLabel('Key').inputValue();
    expect(key).toMatch(/^sk-svc-/);
    await expectAccessible(page, 'the cluster keys page with the dialog');

    const obj = JSON.parse(await apiKeyJson('team-a.ci-bot')) as { metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> };
    expect(obj.metadata.annotations['gateway.svc.dev/created-by']).toBe(`system:serviceaccount:${inst.ns}:${TEAM_A}`);
    expect(obj.spec).toMatchObject({ accountRef: 'team-a', displayName: 'ci-bot', limits: { rpm: 60 }, displayedKey: `sk-svc-…${key.slice(-4)}` });
    expect(obj.spec.keyHash).toMatch(/^[0-9a-f]{64}$/);
    const apiKeyStatus = await apiKeyJson('team-a.ci-bot');
    expect(occurrences(JSON.stringify(obj), key)).toBe(0);
    const secrets = await kubectlOk(cluster.cp, ['get', '-n', inst.ns, 'secrets', '-o', 'json']);
    expect(occurrences(secrets, key)).toBe(0);
    expect((await kubectl(cluster.cp, ['get', '-n', inst.ns, 'secret', 'team-a.ci-bot-key'])).code).not.toBe(0);
    const events = await kubectlOk(cluster.cp, ['get', '-n', inst.ns, 'events', '--field-selector', 'involvedObject.name=team-a.ci-bot', '-o', 'json']);
    expect(events).toContain(`created in the console by system:serviceaccount:${inst.ns}:${TEAM_A}`);

    await waitFor('the gateway accepts the new key', async () => (await chat(key)) === 200, 30_000, 200).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${inst.operators[0]?.output().slice(-3000)}\n${apiKeyStatus}`);
    });
    await page.getByRole('link', { name: 'Done, close' }).click();
    // The gateway touched the key's "last used" in Redis when it admitted the call.
    const row = await page.getByRole('row', { name: /^ci-bot / }).textContent();
    expect(row).not.toContain('never');
    expect(row).toMatch(/by system:serviceaccount:.*:team-a-dev[\s\S]*\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    await page.getByRole('link', { name: 'Revoke ci-bot' }).click();
    await page.getByLabel('Type the key name to confirm').fill('ci-bot');
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Key ci-bot is revoked.');
    await waitFor('the gateway refuses the revoked key', async () => (await chat(key)) === 401, 30_000, 200);
    const revoked = JSON.parse(await apiKeyJson('team-a.ci-bot')) as { metadata: { annotations: Record<string, string> }; spec: { revoked: boolean } };
    expect([revoked.spec.revoked, revoked.metadata.annotations['gateway.svc.dev/revoked-by']]).toEqual([true, `system:serviceaccount:${inst.ns}:${TEAM_A}`]);
  }, 120_000);

  it('rotates: the new key works at once, the old one is pending (an annotation, so it survives restarts) and revoked when due', async () => {
    const page = await signIn(tokenA);
    await page.getByLabel('Name', { exact: true }).fill('deploy-bot');
    await page.getByRole('button', { name: 'Create key' }).click();
    const old = await page.getByRole('dialog').getByLabel('Key').inputValue();
    await page.getByRole('link', { name: 'Done, close' }).click();
    await page.getByRole('link', { name: 'Rotate deploy-bot' }).click();
    await page.getByLabel('Grace period').selectOption({ label: '24 hours' });
    await page.getByRole('button', { name: 'Rotate key' }).click();
    const fresh = await page.getByRole('dialog').getByLabel('Key').inputValue();
    await page.getByRole('link', { name: 'Done, close' }).click();
    await expect(page.getByRole('row', { name: /^deploy-bot / }).textContent()).resolves.toMatch(/Active, revoked at .* UTC \(rotated\)/);
    await waitFor('both keys work during the grace period', async () => (await chat(old)) === 200 && (await chat(fresh)) === 200, 30_000, 200);
    const annotations = (JSON.parse(await apiKeyJson('team-a.deploy-bot')) as { metadata: { annotations: Record<string, string> } }).metadata.annotations;
    expect(Date.parse(annotations['gateway.svc.dev/revoke-at'] as string) - Date.now()).toBeGreaterThan(23 * 3600_000);
    // The console restarts (sessions are in Redis: still signed in); the pending revocation is still there.
    await console_.stop();
    console_ = await startConsoleProcess(consoleEnv);
    await page.goto(`${console_.url}/dashboard/keys`);
    await expect(page.getByRole('row', { name: /^deploy-bot / }).textContent()).resolves.toMatch(/Active, revoked at .* UTC \(rotated\)/);
    // A day later (the annotation moved into the past): the next look revokes it, and the gateway refuses it.
    await kubectlOk(cluster.cp, [
      'annotate',
      '-n',
      inst.ns,
      'apikey',
      'team-a.deploy-bot',
      '--overwrite',
      'gateway.svc.dev/revoke-at=2020-01-01T00:00:00.000Z',
    ]);
    await page.reload();
    await expect(page.getByRole('row', { name: /^deploy-bot / }).textContent()).resolves.toContain('Revoked');
    await waitFor('the gateway refuses the rotated-out key', async () => (await chat(old)) === 401, 30_000, 200);
    expect(await chat(fresh)).toBe(200);
    const redisDump = await redisText(cluster.redis.client);
    for (const key of [old, fresh]) expect(occurrences(redisDump, key)).toBe(0);
  }, 120_000);

  it('a user without manage-keys sees no Create button, gets 403 posting anyway, and cannot see the other account', async () => {
    const page = await signIn(tokenB);
    await expect(page.getByText('Account: team-b').count()).resolves.toBe(1);
    await expect(page.getByRole('button', { name: 'Create key' }).count()).resolves.toBe(0);
    await expect(page.getByRole('link', { name: /^(Revoke|Rotate) / }).count()).resolves.toBe(0);
    await expectAccessible(page, 'the read-only keys page');
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const post = await page.request.post(`${console_.url}/dashboard/keys`, { form: { _csrf: csrf, account: 'team-b', name: 'sneaky' }, maxRedirects: 0 });
    expect(post.status()).toBe(403);
    const other = await page.request.post(`${console_.url}/dashboard/keys`, { form: { _csrf: csrf, account: 'team-a', name: 'sneaky' }, maxRedirects: 0 });
    expect(other.status()).toBe(403);
    expect(await kubectlOk(cluster.cp, ['get', '-n', inst.ns, 'apikeys', '-o', 'json'])).not.toContain('sneaky');
    const peek = await page.request.get(`${console_.url}/dashboard/keys?account=team-a`);
    expect(peek.status()).toBe(403);
    await page.goto(`${console_.url}/dashboard/keys?account=team-a`);
    await expect(page.getByRole('alert').textContent()).resolves.toBe('You may not see account team-a.');
    await expectAccessible(page, 'the 403 page');
    await page.goto(`${console_.url}/dashboard/usage`);
    await expect(page.getByRole('heading', { name: /Account team-b/ }).count()).resolves.toBe(1);
    await expectAccessible(page, 'the cluster usage page');
    expect((await page.request.get(`${console_.url}/dashboard/usage?account=team-a`)).status()).toBe(403);
  });

  it('runs under a least-privilege ServiceAccount: no Secrets, no deletes, nothing outside its namespace', async () => {
    const as = `--as=system:serviceaccount:${inst.ns}:${CONSOLE_SA}`;
    const can = async (...args: string[]): Promise<string> => (await kubectl(cluster.cp, ['auth', 'can-i', as, ...args])).stdout.trim();
    expect(await can('create', 'apikeys.gateway.svc.dev', '-n', inst.ns)).toBe('yes');
    expect(await can('create', 'tokenreviews.authentication.k8s.io')).toBe('yes');
    expect(await can('create', 'subjectaccessreviews.authorization.k8s.io')).toBe('yes');
    expect(await can('get', 'secrets', '-n', inst.ns)).toBe('no');
    expect(await can('delete', 'apikeys.gateway.svc.dev', '-n', inst.ns)).toBe('no');
    expect(await can('patch', 'accounts.gateway.svc.dev', '-n', inst.ns)).toBe('no');
    expect(await can('list', 'apikeys.gateway.svc.dev', '-n', 'default')).toBe('no');
  });
});
