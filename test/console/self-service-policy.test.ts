// The self-service policy (docs/console.md, Self-service policy) end to end: the standalone process with hobby's
// Account as the docs show it (spec.selfService caps), a real OpenID provider, and headless Chromium signing in a
// person who has only create-own-keys there. The form shows the caps; a key above them is refused next to the
// field (422), also when the form is posted directly; a key within them works; the per-person limit is the
// Account's maxKeysPerPerson.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import { DEMO_CONFIG } from '../../gateway/config/standalone.ts';
import { docExample } from '../helpers/docs.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { expectAccessible, launchBrowser, ssoSignIn } from './browser.ts';

const CLIENT = { id: 'svc-console', secret: 'oidc-policy-client-secret-0123456789' };
let idp: TestOidcProvider;
let gw: GatewayProcess;
let browser: Browser;

beforeAll(async () => {
  idp = await startOidcProvider({ bob: { email: 'bob@example.com', groups: ['team-b'] } });
  const dir = mkdtempSync(join(tmpdir(), 'svc-policy-'));
  writeFileSync(join(dir, 'client-secret'), `${CLIENT.secret}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'access.yaml'), docExample('docs/console.md', 'console-access-file'));
  // The demo manifests, with Account hobby as docs/console.md shows it.
  const hobby = parse(docExample('docs/console.md', 'console-self-service-policy')) as { metadata: { name: string } };
  const docs = parseAllDocuments(readFileSync(DEMO_CONFIG, 'utf8'))
    .map((d) => d.toJS() as { kind: string; metadata: { name: string } })
    .map((d) => (d.kind === 'Account' && d.metadata.name === hobby.metadata.name ? hobby : d));
  [gw, browser] = await Promise.all([
    startGatewayProcess({
      SVC_CONFIG: writeManifests(docs),
      SVC_CONSOLE_TOKEN: 'policy-test-admin-token-0123456789',
      SVC_CONSOLE_OIDC_ISSUER: idp.issuer,
      SVC_CONSOLE_OIDC_CLIENT_ID: CLIENT.id,
      SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE: join(dir, 'client-secret'),
      SVC_CONSOLE_OIDC_SCOPES: 'openid email groups',
      SVC_CONSOLE_OIDC_USERNAME_CLAIM: 'email',
      SVC_CONSOLE_OIDC_GROUPS_PREFIX: 'oidc:',
      SVC_CONSOLE_OIDC_NAME: 'Example SSO',
      SVC_CONSOLE_ACCESS_FILE: join(dir, 'access.yaml'),
      // The console's default limit: the Account's maxKeysPerPerson (3) replaces it.
      SVC_CONSOLE_OWN_KEYS_MAX: '10',
    }),
    launchBrowser(),
  ]);
  idp.register(gw.url, CLIENT);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await idp?.stop();
});

function signInAs(login: string): Promise<{ context: BrowserContext; page: Page }> {
  return ssoSignIn(browser, gw.url, idp.issuer, login);
}

async function chat(key: string, model: string): Promise<number> {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await r.arrayBuffer();
  return r.status;
}

describe('the self-service policy of an account', () => {
  it('shows the caps, refuses a key above them (on the page and posted directly), accepts one within', { timeout: 120_000 }, async () => {
    const { context, page } = await signInAs('bob');
    await expect(page.getByText('Required for your keys: at most 5 USD. Resets on the 1st (UTC).').count()).resolves.toBe(1);
    await expect(page.getByText('Required for your keys: model ids or globs within mock-mini, separated by commas or spaces.').count()).resolves.toBe(1);
    await expectAccessible(page, 'the Create key form with a self-service policy');

    // Above the budget cap: told next to the field, and no key is made.
    await page.getByLabel('Name', { exact: true }).fill('too-big');
    await page.getByLabel('Monthly budget (USD)').fill('10');
    await page.getByLabel('Models').fill('mock-mini');
    const [tooBig] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Create key' }).click(),
    ]);
    expect(tooBig.status()).toBe(422);
    await expect(page.getByText('At most 5 USD a month for a key you make yourself (the self-service policy of this account).').count()).resolves.toBe(1);
    await expect(page.getByRole('dialog').count()).resolves.toBe(0);
    await expectAccessible(page, 'the Create key form refusing a key above the policy');

    // Another model: told which one is outside.
    await page.getByLabel('Monthly budget (USD)').fill('5');
    await page.getByLabel('Models').fill('mock-mini, mock-pro');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect(page.getByText('mock-pro is not open to keys you make yourself: choose within mock-mini.').count()).resolves.toBe(1);

    // Posted directly, without the page: the same refusals.
    const csrf = (await page.locator('input[name=_csrf]').first().getAttribute('value')) as string;
    const post = (form: Record<string, string>) =>
      context.request.post(`${gw.url}/dashboard/keys`, { form: { _csrf: csrf, account: 'hobby', ...form }, maxRedirects: 0 });
    const direct = await post({ name: 'direct', models: 'mock-mini' });
    expect(direct.status()).toBe(422);
    expect(await direct.text()).toContain('Set a monthly budget of at most 5 USD: the self-service policy of this account requires one.');
    const anyModel = await post({ name: 'direct', monthlyBudgetUsd: '1', models: '*' });
    expect(anyModel.status()).toBe(422);
    expect(await anyModel.text()).toContain('* is not open to keys you make yourself');

    // Within the caps: made, shown once, and it works for the model it names.
    await page.getByLabel('Name', { exact: true }).fill('within');
    await page.getByLabel('Monthly budget (USD)').fill('5');
    await page.getByLabel('Models').fill('mock-mini');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByRole('dialog').getByLabel('Key').inputValue();
    expect(await chat(key, 'mock-mini')).toBe(200);

    // maxKeysPerPerson 3: two more, then no fourth.
    expect((await post({ name: 'second', monthlyBudgetUsd: '1', models: 'mock-mini' })).status()).toBe(201);
    expect((await post({ name: 'third', monthlyBudgetUsd: '1', models: 'mock-mini' })).status()).toBe(201);
    const fourth = await post({ name: 'fourth', monthlyBudgetUsd: '1', models: 'mock-mini' });
    expect(fourth.status()).toBe(403);
    expect(await fourth.text()).toContain('You have 3 keys in account hobby, the most one person may have.');
    await context.close();
  });
});
