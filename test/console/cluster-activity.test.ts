// The audit trail of the cluster console (npm run console) on a real kube-apiserver: a person signed in through a real
// OpenID provider creates, rotates and revokes a key; each action is an Event on the ApiKey object naming them (as
// `kubectl get events --field-selector` in docs/console.md finds it), and a record on the Activity page, which the
// RoleBinding's view-activity verb opens (SubjectAccessReview) and its absence closes (403, the CSV too).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PEPPER, install, startCluster, type Cluster, type Installation } from '../operator/harness.ts';
import { kubectlOk } from '../k8s/kubectl.ts';
import { docExample } from '../helpers/docs.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { until } from '../helpers/until.ts';
import { consoleIdentity } from './cluster-identity.ts';
import { startConsoleProcess, type ConsoleProcess } from './console-process.ts';
import { expectAccessible, launchBrowser, ssoSignIn } from './browser.ts';
import { startStripeMock, type StripeMock } from '../billing-stripe/stripe-mock.ts';

const API = 'gateway.svc.dev/v1alpha1';
const CLIENT = { id: 'svc-console', secret: '' };
const MANIFESTS = [
  { apiVersion: API, kind: 'Plan', metadata: { name: 'builder' }, spec: { tier: 2, limits: { rpm: 600, tpm: 200000 } } },
  { apiVersion: API, kind: 'Account', metadata: { name: 'team-a' }, spec: { planRef: 'builder' } },
  { apiVersion: API, kind: 'Account', metadata: { name: 'team-b' }, spec: { planRef: 'builder' } },
];

let cluster: Cluster;
let inst: Installation;
let idp: TestOidcProvider;
let console_: ConsoleProcess;
let browser: Browser;
let stripe: StripeMock;
const STRIPE_KEY = 'sk_test_clusterActivity0123456789';

beforeAll(async () => {
  [cluster, browser, idp, stripe] = await Promise.all([
    startCluster('console-activity'),
    launchBrowser(),
    startOidcProvider({
      alice: { email: 'alice@example.com', groups: ['team-a'] },
      bob: { email: 'bob@example.com', groups: ['team-b'] },
    }),
    startStripeMock(),
  ]);
  inst = await install(cluster, 'console-activity');
  await inst.kubectlOk(['apply', '-f', '-'], MANIFESTS.map((m) => JSON.stringify(m)).join('\n---\n'));
  const kubeconfig = await consoleIdentity(cluster.cp, inst.ns);
  // The docs' Role and RoleBinding (view-activity among the verbs); team-b's group may look at its account only.
  await kubectlOk(
    cluster.cp,
    ['apply', '-f', '-'],
    docExample('docs/console.md', 'console-oidc-group-binding').replaceAll('namespace: svc-gateway', `namespace: ${inst.ns}`),
  );
  await inst.kubectlOk(['create', 'role', 'team-b-console', '--verb=get', '--resource=accounts.gateway.svc.dev', '--resource-name=team-b']);
  await inst.kubectlOk(['create', 'rolebinding', 'team-b-console', '--role=team-b-console', '--group=oidc:team-b']);
  // Alice may also add credits to team-a.
  await inst.kubectlOk(['create', 'role', 'team-a-billing', '--verb=manage-billing', '--resource=accounts.gateway.svc.dev', '--resource-name=team-a']);
  await inst.kubectlOk(['create', 'rolebinding', 'team-a-billing', '--role=team-a-billing', '--user=oidc:alice@example.com']);
  console_ = await startConsoleProcess({
    KUBECONFIG: kubeconfig,
    WATCH_NAMESPACE: inst.ns,
    REDIS_URL: cluster.redis.url,
    SVC_REDIS_PREFIX: inst.prefix,
    SVC_KEY_PEPPER: PEPPER,
    SVC_CONSOLE_OIDC_ISSUER: idp.issuer,
    SVC_CONSOLE_OIDC_CLIENT_ID: CLIENT.id,
    SVC_CONSOLE_OIDC_SCOPES: 'openid email groups',
    SVC_CONSOLE_OIDC_USERNAME_CLAIM: 'email',
    SVC_CONSOLE_OIDC_USERNAME_PREFIX: 'oidc:',
    SVC_CONSOLE_OIDC_GROUPS_PREFIX: 'oidc:',
    SVC_CONSOLE_OIDC_NAME: 'Example SSO',
    STRIPE_SECRET_KEY: STRIPE_KEY,
    STRIPE_WEBHOOK_SECRET: 'whsec_cluster_activity',
    STRIPE_API_BASE: stripe.url,
  });
  idp.register(console_.url, CLIENT);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await console_?.stop();
  await inst?.stop();
  await cluster?.stop();
  await idp?.stop();
  await stripe?.stop();
});

async function signInAs(login: string): Promise<Page> {
  return (await ssoSignIn(browser, console_.url, idp.issuer, login)).page;
}

interface KubeEvent {
  reason: string;
  message: string;
  involvedObject: { kind: string; name: string };
}

async function apiKeyEvents(): Promise<KubeEvent[]> {
  const out = await inst.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.kind=ApiKey', '-o', 'json']);
  return (JSON.parse(out) as { items: KubeEvent[] }).items;
}

describe('console audit trail, cluster mode', () => {
  it('makes each key action an Event on the ApiKey naming the person, and a record on the Activity page', async () => {
    const alice = await signInAs('alice');
    await alice.getByLabel('Name', { exact: true }).fill('audited');
    await alice.getByRole('button', { name: 'Create key' }).click();
    const key = await alice.getByRole('dialog').getByLabel('Key').inputValue();
    await alice.goto(`${console_.url}/dashboard/keys?account=team-a`);
    await alice.getByRole('link', { name: 'Revoke audited', exact: true }).click();
    await alice.getByLabel('Type the key name to confirm').fill('audited');
    await alice.getByRole('button', { name: 'Revoke key' }).click();
    await expect(alice.getByText('Key audited is revoked.').count()).resolves.toBe(1);

    await until(async () => (await apiKeyEvents()).some((e) => e.reason === 'KeyRevoked'), 15_000, 'the KeyRevoked Event');
    const events = await apiKeyEvents();
    const objectName = events.find((e) => e.reason === 'KeyCreated')?.involvedObject.name as string;
    const onIt = events.filter((e) => e.involvedObject.name === objectName).map((e) => `${e.reason}: ${e.message}`);
    expect(onIt).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^KeyCreated: .* by oidc:alice@example\.com\.$/),
        'KeyRevoked: Key revoked in the console by oidc:alice@example.com.',
      ]),
    );
    expect(JSON.stringify(events)).not.toContain(key);
    // The object's own name finds them too, as kubectl describe shows them.
    const named = await inst.kubectlOk(['get', 'events', '--field-selector', `involvedObject.kind=ApiKey,involvedObject.name=${objectName}`, '-o', 'name']);
    expect(named.trim().split('\n').length).toBeGreaterThanOrEqual(2);

    await alice.getByRole('link', { name: 'Activity' }).click();
    await until(
      async () => {
        await alice.reload();
        return (await alice.locator('table tbody tr').count()) >= 2;
      },
      15_000,
      'two records on the Activity page',
    );
    const rows = await alice.locator('table tbody tr').allTextContents();
    expect(rows[0]).toMatch(/oidc:alice@example\.com.*Key revoked.*audited.*success \(200\)/s);
    expect(rows[1]).toMatch(/oidc:alice@example\.com.*Key created.*audited.*success \(201\)/s);
    await expectAccessible(alice, 'the Activity page in a cluster');
    // Her Role names team-a: the console-wide sign-ins need view-activity on every account.
    expect((await alice.goto(`${console_.url}/dashboard/activity?account=*`))?.status()).toBe(403);
  });

  it('makes Add credits an Event on the Account naming the person, and a record', async () => {
    const alice = await signInAs('alice');
    await alice.goto(`${console_.url}/dashboard/billing?account=team-a`);
    const csrf = (await alice.locator('input[name=_csrf]').first().getAttribute('value')) as string;
    const r = await alice.context().request.post(`${console_.url}/dashboard/billing/checkout`, {
      form: { _csrf: csrf, account: 'team-a', amount: '25' },
      maxRedirects: 0,
    });
    expect(r.status(), (await r.text()).replace(/<[^>]+>/g, ' ').slice(-600)).toBe(303);
    const accountEvents = async (): Promise<KubeEvent[]> =>
      (
        JSON.parse(await inst.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.kind=Account,involvedObject.name=team-a', '-o', 'json'])) as {
          items: KubeEvent[];
        }
      ).items;
    await until(async () => (await accountEvents()).some((e) => e.reason === 'CheckoutStarted'), 15_000, 'the CheckoutStarted Event');
    const e = (await accountEvents()).find((x) => x.reason === 'CheckoutStarted') as KubeEvent;
    expect(e.message).toMatch(
      /^checkout-started in the console by oidc:alice@example\.com \(subject alice\) from 127\.0\.0\.1: USD 25\.00, Stripe Checkout Session \S+\.$/,
    );
    expect(JSON.stringify(await accountEvents())).not.toContain(STRIPE_KEY);
    await alice.goto(`${console_.url}/dashboard/activity?account=team-a&action=checkout-started`);
    await expect(alice.locator('table tbody tr').first().textContent()).resolves.toMatch(
      /oidc:alice@example\.com.*Checkout started.*success \(303\).*USD 25\.00/s,
    );
  });

  it('refuses the Activity page and CSV without view-activity (SubjectAccessReview)', async () => {
    const bob = await signInAs('bob');
    expect((await bob.goto(`${console_.url}/dashboard/activity`))?.status()).toBe(403);
    for (const path of ['/dashboard/activity?account=team-b', '/dashboard/activity.csv?account=team-b', '/dashboard/activity.csv?account=team-a']) {
      expect((await bob.context().request.get(`${console_.url}${path}`)).status(), path).toBe(403);
    }
  });
});
