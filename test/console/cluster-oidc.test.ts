// OpenID Connect sign-in to the cluster console (npm run console) on a real kube-apiserver: people signed in through a
// real OpenID provider (oidc-provider, its own login and consent pages) have their prefixed user name and groups asked
// about in the console's SubjectAccessReviews, so the docs' RoleBinding to an IdP group grants its account to the whole
// group, and a person of another group sees only theirs.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PEPPER, install, startCluster, type Cluster, type Installation } from '../operator/harness.ts';
import { kubectlOk } from '../k8s/kubectl.ts';
import { docExample } from '../helpers/docs.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { consoleIdentity } from './cluster-identity.ts';
import { startConsoleProcess, type ConsoleProcess } from './console-process.ts';
import { expectAccessible, launchBrowser, ssoSignIn } from './browser.ts';

const API = 'gateway.svc.dev/v1alpha1';
const CLIENT = { id: 'svc-console', secret: 'cluster-oidc-client-secret-0123' };
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

beforeAll(async () => {
  [cluster, browser, idp] = await Promise.all([
    startCluster('console-oidc'),
    launchBrowser(),
    startOidcProvider({
      alice: { email: 'alice@example.com', groups: ['team-a'] },
      bob: { email: 'bob@example.com', groups: ['team-b'] },
    }),
  ]);
  inst = await install(cluster, 'console-oidc');
  await inst.kubectlOk(['apply', '-f', '-'], MANIFESTS.map((m) => JSON.stringify(m)).join('\n---\n'));
  const kubeconfig = await consoleIdentity(cluster.cp, inst.ns);
  // The docs' Role and RoleBinding to the IdP group, as written (namespace aside); team-b's group may only look.
  await kubectlOk(
    cluster.cp,
    ['apply', '-f', '-'],
    docExample('docs/console.md', 'console-oidc-group-binding').replaceAll('namespace: svc-gateway', `namespace: ${inst.ns}`),
  );
  await inst.kubectlOk(['create', 'role', 'team-b-console', '--verb=get', '--resource=accounts.gateway.svc.dev', '--resource-name=team-b']);
  await inst.kubectlOk(['create', 'rolebinding', 'team-b-console', '--role=team-b-console', '--group=oidc:team-b']);
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
    SVC_CONSOLE_TOKEN_SIGN_IN: '0',
  });
  // A public client here (no secret file): PKCE alone, as the settings allow.
  idp.register(console_.url, { ...CLIENT, secret: '' });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await console_?.stop();
  await inst?.stop();
  await cluster?.stop();
  await idp?.stop();
});

async function signInAs(login: string): Promise<Page> {
  return (await ssoSignIn(browser, console_.url, idp.issuer, login)).page;
}

describe('console, cluster mode, OpenID Connect', () => {
  it('offers only the provider when the token field is off', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${console_.url}/dashboard/login`);
    expect(await page.getByRole('button').allTextContents()).toEqual(['Sign in with Example SSO']);
    await expect(page.getByLabel('Kubernetes token').count()).resolves.toBe(0);
    await expectAccessible(page, 'the cluster sign-in page with OIDC only');
  });

  it('grants each person what the RoleBinding to their IdP group grants, by SubjectAccessReview', async () => {
    const alice = await signInAs('alice');
    await expect(alice.getByText('Signed in as oidc:alice@example.com').count()).resolves.toBe(1);
    await expect(alice.getByText('Account: team-a').count()).resolves.toBe(1);
    expect(await alice.content()).not.toContain('team-b');
    await expect(alice.getByRole('button', { name: 'Create key' }).count()).resolves.toBe(1);
    expect((await alice.goto(`${console_.url}/dashboard/keys?account=team-b`))?.status()).toBe(403);

    const bob = await signInAs('bob');
    await expect(bob.getByText('Account: team-b').count()).resolves.toBe(1);
    await expect(bob.getByRole('button', { name: 'Create key' }).count()).resolves.toBe(0);
    expect((await bob.goto(`${console_.url}/dashboard/keys?account=team-a`))?.status()).toBe(403);
    expect((await bob.goto(`${console_.url}/dashboard/usage?account=team-b`))?.status()).toBe(403);
  });
});
