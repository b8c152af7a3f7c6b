// OpenID Connect sign-in end to end: a real OpenID provider (oidc-provider, in this process, on localhost: another
// site than the console on 127.0.0.1, as a real provider is) with two people in two groups, the real standalone
// process (npm start) with the groups given accounts by SVC_CONSOLE_ACCESS_FILE, headless Chromium signing each in
// through the provider's own login and consent pages. Each sees exactly their group's account; sign-out ends the
// session and offers the provider's; a forged or replayed state, a callback in a browser that never started the
// sign-in (no PKCE verifier), an open-redirect return address: each a clear page and no session.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { docExample } from '../helpers/docs.ts';
import { expectAccessible, launchBrowser, throughProvider } from './browser.ts';

const CLIENT = { id: 'svc-console', secret: 'oidc-test-client-secret-0123456789' };
let idp: TestOidcProvider;
let gw: GatewayProcess;
let browser: Browser;

beforeAll(async () => {
  idp = await startOidcProvider({
    alice: { email: 'alice@example.com', groups: ['team-a'] },
    bob: { email: 'bob@example.com', groups: ['team-b'] },
  });
  const dir = mkdtempSync(join(tmpdir(), 'svc-oidc-'));
  writeFileSync(join(dir, 'client-secret'), `${CLIENT.secret}\n`, { mode: 0o600 });
  // The access file of docs/console.md, as written there.
  writeFileSync(join(dir, 'access.yaml'), docExample('docs/console.md', 'console-access-file'));
  [gw, browser] = await Promise.all([
    startGatewayProcess({
      SVC_CONSOLE_TOKEN: 'oidc-test-admin-token-0123456789',
      SVC_CONSOLE_OIDC_ISSUER: idp.issuer,
      SVC_CONSOLE_OIDC_CLIENT_ID: CLIENT.id,
      SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE: join(dir, 'client-secret'),
      SVC_CONSOLE_OIDC_SCOPES: 'openid email groups',
      SVC_CONSOLE_OIDC_USERNAME_CLAIM: 'email',
      SVC_CONSOLE_OIDC_GROUPS_PREFIX: 'oidc:',
      SVC_CONSOLE_OIDC_NAME: 'Example SSO',
      SVC_CONSOLE_ACCESS_FILE: join(dir, 'access.yaml'),
      SVC_TRUST_PROXY: '127.0.0.1',
      SVC_CONSOLE_OWN_KEYS_MAX: '2',
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

// Each browser is its own client address (the console believes X-Forwarded-For from 127.0.0.1 here, as behind an
// Ingress), so the refusals below, each a failed sign-in, do not lock the next test's browser out.
let clients = 0;

async function fresh(): Promise<{ context: BrowserContext; page: Page }> {
  clients += 1;
  const context = await browser.newContext({ extraHTTPHeaders: { 'x-forwarded-for': `192.0.2.${clients}` } });
  context.setDefaultTimeout(15_000);
  return { context, page: await context.newPage() };
}

async function signInAs(login: string): Promise<{ context: BrowserContext; page: Page }> {
  const s = await fresh();
  await s.page.goto(`${gw.url}/dashboard/keys`);
  await s.page.getByRole('button', { name: 'Sign in with Example SSO' }).click();
  await throughProvider(s.page, idp.issuer, login);
  await s.page.waitForURL(`${gw.url}/dashboard/keys`);
  return s;
}

/** The accounts the keys page offers: a picker with several, the one account's name with one. */
async function accountsOn(page: Page): Promise<string[]> {
  const picker = page.getByLabel('Account', { exact: true });
  if ((await picker.count()) > 0) return picker.locator('option').allTextContents();
  const one = await page
    .locator('main p', { hasText: /^Account: / })
    .locator('strong')
    .allTextContents();
  return one;
}

async function chat(key: string): Promise<number> {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await r.arrayBuffer();
  return r.status;
}

async function sessionCookies(context: BrowserContext): Promise<string[]> {
  return (await context.cookies()).filter((c) => c.name === 'svc_console' && c.value !== '').map((c) => c.value);
}

describe('console sign-in with OpenID Connect', () => {
  it('offers "Sign in with Example SSO" as the first button, the admin token after it, and passes axe', async () => {
    const { context, page } = await fresh();
    await page.goto(`${gw.url}/dashboard/login`);
    const buttons = await page.getByRole('button').allTextContents();
    expect(buttons[0]).toBe('Sign in with Example SSO');
    await expect(page.getByLabel('Admin token').count()).resolves.toBe(1);
    await expectAccessible(page, 'the sign-in page with OpenID Connect');
    await context.close();
  });

  it('signs each person in through the provider, and each sees exactly their group’s account', async () => {
    const alice = await signInAs('alice');
    await expect(alice.page.getByText('Signed in as alice@example.com').count()).resolves.toBe(1);
    expect(await accountsOn(alice.page)).toEqual(['demo']);
    await expect(alice.page.getByRole('button', { name: 'Create key' }).count()).resolves.toBe(1);
    await expectAccessible(alice.page, 'the keys page signed in with OpenID Connect');
    // The other account, asked for by name: refused.
    const other = await alice.page.goto(`${gw.url}/dashboard/keys?account=hobby`);
    expect(other?.status()).toBe(403);

    const bob = await signInAs('bob');
    await expect(bob.page.getByText('Signed in as bob@example.com').count()).resolves.toBe(1);
    expect(await accountsOn(bob.page)).toEqual(['hobby']);
    const demo = await bob.page.goto(`${gw.url}/dashboard/keys?account=demo`);
    expect(demo?.status()).toBe(403);
    await alice.context.close();
    await bob.context.close();
  });

  it('lets a person with create-own-keys make, use and revoke their own keys only, within the per-person limit', async () => {
    const bob = await signInAs('bob');
    // hobby's key from the config (demo-free) is not theirs: not even listed.
    await expect(bob.page.getByRole('region', { name: /^Your keys in account hobby \(0\)/ }).count()).resolves.toBe(1);
    expect(await bob.page.content()).not.toContain('demo-free');
    await bob.page.getByLabel('Name', { exact: true }).fill('bobs-key');
    await bob.page.getByRole('button', { name: 'Create key' }).click();
    const key = await bob.page.getByRole('dialog').getByLabel('Key').inputValue();
    expect(key).toMatch(/^sk-svc-/);
    expect(await chat(key)).toBe(200);
    await bob.page.goto(`${gw.url}/dashboard/keys?account=hobby`);
    await expect(bob.page.getByRole('row', { name: /^bobs-key yours / }).count()).resolves.toBe(1);
    await expect(bob.page.getByRole('row', { name: /^bobs-key / }).textContent()).resolves.toContain('by bob@example.com');
    await expectAccessible(bob.page, 'the keys page of a person with create-own-keys');
    // Another's key, by posting the forms directly: refused, and the key still works.
    const csrf = (await bob.page.locator('input[name=_csrf]').first().getAttribute('value')) as string;
    const post = (path: string, form: Record<string, string>) =>
      bob.context.request.post(`${gw.url}${path}`, { form: { _csrf: csrf, ...form }, maxRedirects: 0 });
    expect((await post('/dashboard/keys/revoke', { account: 'hobby', name: 'demo-free', confirm: 'demo-free' })).status()).toBe(403);
    expect((await post('/dashboard/keys/rotate', { account: 'hobby', name: 'demo-free', grace: 'now' })).status()).toBe(403);
    expect((await bob.context.request.get(`${gw.url}/dashboard/keys/revoke?account=hobby&name=demo-free`)).status()).toBe(403);
    expect((await post('/dashboard/keys', { account: 'demo', name: 'not-mine' })).status()).toBe(403);
    expect(await chat(gw.keys['demo-free'] as string)).toBe(200);
    // The limit (SVC_CONSOLE_OWN_KEYS_MAX=2 here): a second key, then no third.
    expect((await post('/dashboard/keys', { account: 'hobby', name: 'bobs-second' })).status()).toBe(201);
    const third = await post('/dashboard/keys', { account: 'hobby', name: 'bobs-third' });
    expect(third.status()).toBe(403);
    expect(await third.text()).toContain('the most one person may have');
    // Their own: revoked by them; then the gateway refuses it.
    expect((await post('/dashboard/keys/revoke', { account: 'hobby', name: 'bobs-key', confirm: 'bobs-key' })).status()).toBe(200);
    expect(await chat(key)).toBe(401);
    await bob.context.close();
  });

  it('shows a manager the account’s keys with their own first', async () => {
    const alice = await signInAs('alice');
    await alice.page.getByLabel('Name', { exact: true }).fill('zz-alices-key');
    await alice.page.getByRole('button', { name: 'Create key' }).click();
    await alice.page.goto(`${gw.url}/dashboard/keys?account=demo`);
    const first = await alice.page
      .getByRole('region', { name: /^Keys of account demo/ })
      .getByRole('rowheader')
      .first()
      .textContent();
    expect(first).toBe('zz-alices-key yours');
    await expect(
      alice.page
        .getByRole('row', { name: /^demo-builder / })
        .getByRole('link', { name: 'Revoke demo-builder' })
        .count(),
    ).resolves.toBe(1);
    await alice.context.close();
  });

  it('logs who signed in, and no authorization code, token or client secret', async () => {
    // The process's log names who signed in, and holds no authorization code, token or client secret.
    const log = gw.output();
    expect(log).toMatch(/"user":"alice@example.com","groups":\["oidc:team-a"\],"sub":"alice","msg":"Console sign-in \(OpenID Connect\)"/);
    expect(log).not.toMatch(/code=|eyJ|refresh_token/);
    expect(log).not.toContain(CLIENT.secret);
  });

  it('renews the session with the refresh token when the ID token expires, taking the groups anew; ends it when refused', async () => {
    idp.users.set('dave', { email: 'dave@example.com', groups: ['team-b'] });
    idp.idTokenTtlSec = 3;
    try {
      const { context, page } = await signInAs('dave');
      expect(await accountsOn(page)).toEqual(['hobby']);
      const grants = (): number => idp.requests.filter((r) => r.method === 'POST' && r.path === '/token').length;
      const before = grants();
      // Moved to team-a at the provider: the console learns it when it renews the session (a refresh grant).
      idp.users.set('dave', { email: 'dave@example.com', groups: ['team-a'] });
      await new Promise((r) => setTimeout(r, 3500));
      await page.reload();
      expect(await accountsOn(page)).toEqual(['demo']);
      expect(grants()).toBeGreaterThan(before);
      // Gone from the provider: the renewal is refused, the session ends, the sign-in page says why.
      idp.users.delete('dave');
      await new Promise((r) => setTimeout(r, 3500));
      await page.goto(`${gw.url}/dashboard/keys`);
      expect(new URL(page.url()).pathname).toBe('/dashboard/login');
      await expect(page.getByRole('alert').textContent()).resolves.toContain('Example SSO no longer vouches for it');
      expect(await sessionCookies(context)).toEqual([]);
      await context.close();
    } finally {
      idp.idTokenTtlSec = 3600;
    }
  });

  it('ends the session on sign-out and offers the provider’s own sign-out', async () => {
    const { context, page } = await signInAs('alice');
    const before = await sessionCookies(context);
    expect(before).toHaveLength(1);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page.getByRole('heading', { name: 'Signed out' }).count()).resolves.toBe(1);
    const link = page.getByRole('link', { name: 'Sign out of Example SSO too' });
    const href = new URL((await link.getAttribute('href')) as string);
    expect(href.origin).toBe(idp.issuer);
    expect(href.searchParams.get('client_id')).toBe(CLIENT.id);
    expect(href.searchParams.get('post_logout_redirect_uri')).toBe(`${gw.url}/dashboard/login`);
    expect(href.searchParams.get('id_token_hint')).toMatch(/^ey/);
    await expectAccessible(page, 'the signed-out page');
    // The old cookie opens nothing any more.
    const again = await fetch(`${gw.url}/dashboard/keys`, { redirect: 'manual', headers: { cookie: `svc_console=${before[0]}` } });
    expect(again.status).toBe(303);
    // The provider's end-session page takes the hint and asks to confirm (its own page).
    await link.click();
    await page.waitForURL((u) => u.origin === idp.issuer);
    await context.close();
  });

  it('refuses a forged state and a replayed answer, each with a clear page and no session', async () => {
    const { context, page } = await fresh();
    // The provider's answer is held (not delivered to the console): its URL is what an attacker would forge or replay.
    const held = idp.holdNextCallback();
    await page.goto(`${gw.url}/dashboard/login`);
    await page.getByRole('button', { name: 'Sign in with Example SSO' }).click();
    await throughProvider(page, idp.issuer, 'alice');
    const callback = await held;
    const flowCookie = (await context.cookies()).find((c) => c.name === 'svc_console_oidc');
    expect(flowCookie?.sameSite).toBe('Lax');
    const forged = new URL(callback);
    forged.searchParams.set('state', 'forged-state-value');
    const r1 = await page.goto(forged.href);
    expect(r1?.status()).toBe(401);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('does not belong to the sign-in you started (state)');
    await expectAccessible(page, 'a refused sign-in');
    expect(await sessionCookies(context)).toEqual([]);
    // The refusal cleared the browser's flow cookie; put it back, as a replay would: the flow was used up on the server
    // by the forged answer, so the true answer finds nothing either.
    await context.addCookies([flowCookie as NonNullable<typeof flowCookie>]);
    const r2 = await page.goto(callback);
    expect(r2?.status()).toBe(400);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('already used or has expired');
    expect(await sessionCookies(context)).toEqual([]);
    await context.close();
  });

  it('refuses an answer replayed after a successful sign-in, and one arriving in a browser that holds no PKCE verifier', async () => {
    const { context, page } = await fresh();
    let callback = '';
    page.on('request', (req) => {
      if (req.url().startsWith(`${gw.url}/dashboard/login/oidc/callback`)) callback = req.url();
    });
    await page.goto(`${gw.url}/dashboard/login`);
    await page.getByRole('button', { name: 'Sign in with Example SSO' }).click();
    await throughProvider(page, idp.issuer, 'bob');
    await page.waitForURL(`${gw.url}/dashboard/keys`);
    // Replayed in the same browser: refused, and the session made the first time is untouched.
    const replay = await page.goto(callback);
    expect(replay?.status()).toBe(400);
    // In another browser (an attacker holding a stolen code and state): there is no flow, no verifier, no session.
    const other = await fresh();
    const stolen = await other.page.goto(callback);
    expect(stolen?.status()).toBe(400);
    await expect(other.page.getByRole('alert').textContent()).resolves.toContain('was not started in this browser');
    expect(await sessionCookies(other.context)).toEqual([]);
    await other.context.close();
    await context.close();
  });

  it('refuses a sign-in link whose return address leaves the console', async () => {
    const { context, page } = await fresh();
    for (const next of ['https://evil.example/', '//evil.example/dashboard/', '/\\evil.example', 'javascript:alert(1)']) {
      const r = await page.goto(`${gw.url}/dashboard/login/oidc?next=${encodeURIComponent(next)}`);
      expect(r?.status(), next).toBe(400);
      expect(new URL(page.url()).origin).toBe(gw.url);
      await expect(page.getByRole('alert').textContent()).resolves.toContain('outside the console');
    }
    expect(await sessionCookies(context)).toEqual([]);
    await context.close();
  });
});
