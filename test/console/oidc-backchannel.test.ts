// OpenID Connect Back-Channel Logout 1.0 end to end: a real provider (oidc-provider with backchannelLogout, sid in
// its ID tokens) posts a signed logout token to the console when the person ends their session at the provider; in
// headless Chromium the console session is then gone. Forged logout tokens (another key, a nonce, another audience,
// no logout event, no subject or session) are refused with 400 and end nothing; a token the provider's key signed
// naming only the subject ends that person's sessions.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importJWK, SignJWT, type JWK } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docExample } from '../helpers/docs.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';
import { expectAccessible, launchBrowser, ssoSignIn } from './browser.ts';

const CLIENT = { id: 'svc-console', secret: 'oidc-bcl-client-secret-0123456789' };
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
let idp: TestOidcProvider;
let gw: GatewayProcess;
let browser: Browser;

beforeAll(async () => {
  idp = await startOidcProvider({ alice: { email: 'alice@example.com', groups: ['team-a'] } });
  const dir = mkdtempSync(join(tmpdir(), 'svc-bcl-'));
  writeFileSync(join(dir, 'client-secret'), `${CLIENT.secret}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'access.yaml'), docExample('docs/console.md', 'console-access-file'));
  [gw, browser] = await Promise.all([
    startGatewayProcess({
      SVC_CONSOLE_TOKEN: 'bcl-test-admin-token-0123456789',
      SVC_CONSOLE_OIDC_ISSUER: idp.issuer,
      SVC_CONSOLE_OIDC_CLIENT_ID: CLIENT.id,
      SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE: join(dir, 'client-secret'),
      SVC_CONSOLE_OIDC_SCOPES: 'openid email groups',
      SVC_CONSOLE_OIDC_USERNAME_CLAIM: 'email',
      SVC_CONSOLE_OIDC_GROUPS_PREFIX: 'oidc:',
      SVC_CONSOLE_OIDC_NAME: 'Example SSO',
      SVC_CONSOLE_ACCESS_FILE: join(dir, 'access.yaml'),
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

/** Whether the browser's console session still opens the keys page (a fresh request, no redirect followed). */
async function stillSignedIn(context: BrowserContext): Promise<boolean> {
  const r = await context.request.get(`${gw.url}/dashboard/keys`, { maxRedirects: 0 });
  return r.status() === 200;
}

function logout(token: string): Promise<Response> {
  return fetch(`${gw.url}/dashboard/login/oidc/backchannel-logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ logout_token: token }),
  });
}

const claims = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  iss: idp.issuer,
  aud: CLIENT.id,
  iat: Math.floor(Date.now() / 1000),
  jti: randomUUID(),
  sub: 'alice',
  events: { [EVENT]: {} },
  ...extra,
});

describe('back-channel logout', () => {
  it('ends the console session when the person signs out at the provider', { timeout: 120_000 }, async () => {
    const { context, page } = await signInAs('alice');
    expect(await stillSignedIn(context)).toBe(true);
    // At the provider, in the same browser: its own sign-out page.
    await page.goto(`${idp.issuer}/session/end`);
    await page.getByRole('button', { name: /Yes, sign me out/ }).click();
    await until(() => idp.backchannel.length > 0, 30_000, 'the provider posted the logout token');
    expect(idp.backchannel).toEqual([{ ok: true }]);
    expect(await stillSignedIn(context)).toBe(false);
    await page.goto(`${gw.url}/dashboard/keys`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    await expectAccessible(page, 'the sign-in page after a back-channel logout');
    await context.close();
  });

  it('refuses forged logout tokens (400) and ends nothing; the provider-signed one ends the subject’s sessions', { timeout: 120_000 }, async () => {
    const { context } = await signInAs('alice');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const otherKey = await importJWK({ ...(privateKey.export({ format: 'jwk' }) as JWK) }, 'RS256');
    const forged: Array<[string, string, RegExp]> = [
      ['another key', await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'test-rs256' }).sign(otherKey), /signature does not verify/],
      ['a nonce', await idp.sign(claims({ nonce: 'n-0S6_WzA2Mj' })), /must not carry a nonce/],
      ['another audience', await idp.sign(claims({ aud: 'another-client' })), /issued for another client/],
      ['another issuer', await idp.sign(claims({ iss: 'http://localhost:1' })), /issued by another provider/],
      ['no logout event', await idp.sign(claims({ events: { 'http://example.com/other': {} } })), /no back-channel logout event/],
      ['neither sub nor sid', await idp.sign(claims({ sub: undefined })), /neither a subject/],
      ['an old iat', await idp.sign(claims({ iat: Math.floor(Date.now() / 1000) - 3600 })), /too old/],
      ['alg none', `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`, /not accepted/],
    ];
    for (const [what, token, reason] of forged) {
      const r = await logout(token);
      expect(r.status, what).toBe(400);
      const body = (await r.json()) as { error: string; error_description: string };
      expect(body.error, what).toBe('invalid_request');
      expect(body.error_description, what).toMatch(reason);
    }
    expect((await logout('')).status).toBe(400);
    expect(await stillSignedIn(context)).toBe(true);
    // Signed by the provider's key, naming the subject only: every session of that person begun before it ends.
    const r = await logout(await idp.sign(claims()));
    expect(r.status).toBe(200);
    expect(await stillSignedIn(context)).toBe(false);
    await context.close();
  });
});
