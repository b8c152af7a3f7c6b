// The console's defences, in a real browser against the real standalone process: no session -> sign-in, a wrong
// token, failed sign-ins rate limited, a POST without the CSRF token -> 403, script in names shown escaped, the
// cookie's flags, the CSP; axe on the pages a stranger sees.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { expectAccessible, launchBrowser, signIn } from './browser.ts';

const TOKEN = 'abuse-test-console-token-0123456789';
let gw: GatewayProcess;
let browser: Browser;

beforeAll(async () => {
  [gw, browser] = await Promise.all([startGatewayProcess({ SVC_CONSOLE_TOKEN: TOKEN }), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

async function signedInCookie(): Promise<string> {
  const login = await fetch(`${gw.url}/dashboard/login`);
  const pre = /svc_console_login=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1] as string;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await login.text())?.[1] as string;
  const r = await fetch(`${gw.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `svc_console_login=${pre}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token: TOKEN, next: '/dashboard/keys' }),
  });
  expect(r.status).toBe(303);
  const setCookie = r.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/svc_console=[^;]+; Path=\/dashboard; HttpOnly; SameSite=Strict/);
  return `svc_console=${/svc_console=([^;]+)/.exec(setCookie)?.[1]}`;
}

describe('console abuse', () => {
  it('sends every page without a session to sign-in, and the sign-in page passes axe', async () => {
    const page = await browser.newPage();
    for (const path of ['/dashboard/keys', '/dashboard/usage', '/dashboard/usage.csv', '/dashboard/keys/revoke?account=demo&name=demo-builder']) {
      await page.goto(`${gw.url}${path}`);
      expect(new URL(page.url()).pathname).toBe('/dashboard/login');
      await expect(page.getByLabel('Admin token').count()).resolves.toBe(1);
    }
    await expectAccessible(page, 'the sign-in page');
    const post = await fetch(`${gw.url}/dashboard/keys`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=x&account=demo',
    });
    expect([post.status, post.headers.get('location')]).toEqual([303, '/dashboard/login']);
    await page.close();
  });

  it('answers 403 to a POST without the CSRF token or with another one, and makes nothing', async () => {
    const cookie = await signedInCookie();
    for (const body of ['account=demo&name=csrf-less', 'account=demo&name=csrf-wrong&_csrf=forged']) {
      const r = await fetch(`${gw.url}/dashboard/keys`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      expect(r.status).toBe(403);
    }
    const revoke = await fetch(`${gw.url}/dashboard/keys/revoke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'account=demo&name=demo-builder&confirm=demo-builder',
    });
    expect(revoke.status).toBe(403);
    const logout = await fetch(`${gw.url}/dashboard/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(logout.status).toBe(403);
    const list = await (await fetch(`${gw.url}/dashboard/keys?account=demo`, { headers: { cookie } })).text();
    expect(list).not.toContain('csrf-less');
    expect(list).toMatch(/demo-builder[\s\S]*Active/);
  });

  it('shows script in a key name and a task name escaped, and runs none of it', async () => {
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await signIn(page, gw.url, TOKEN);
    const evil = '<script>alert(1)</script>';
    await page.getByLabel('Name', { exact: true }).fill(evil);
    await page.getByLabel('Models').fill('"><img src=x onerror=alert(2)>');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect(page.getByText(/Use at most 50 lowercase letters/).count()).resolves.toBe(1);
    await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe(evil);
    const body = await page.content();
    expect(body).not.toContain(evil);
    expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    await expectAccessible(page, 'the keys page with field errors');
    // A task name is whatever a client sends: it reaches the usage table, escaped.
    const key = gw.keys['demo-builder'] as string;
    const call = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-mini', messages: [{ role: 'user', content: 'hi' }], metadata: { task_type: evil } }),
    });
    expect(call.status).toBe(200);
    await page.goto(`${gw.url}/dashboard/usage?account=demo&group=task`);
    await expect(page.getByRole('rowheader', { name: evil }).count()).resolves.toBe(1);
    expect(await page.content()).not.toContain(evil);
    expect(dialogs).toEqual([]);
    await page.close();
  });

  it('sends the CSP without inline scripts, frame-ancestors none, and ends the session on sign-out', async () => {
    const cookie = await signedInCookie();
    const r = await fetch(`${gw.url}/dashboard/keys`, { headers: { cookie } });
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    const html = await r.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] as string;
    const out = await fetch(`${gw.url}/dashboard/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `_csrf=${csrf}`,
    });
    expect(out.status).toBe(303);
    const after = await fetch(`${gw.url}/dashboard/keys`, { redirect: 'manual', headers: { cookie } });
    expect([after.status, after.headers.get('location')]).toEqual([303, '/dashboard/login?next=%2Fdashboard%2Fkeys']);
  });

  // Last: from here on this address may not sign in for a while.
  it('refuses a wrong token with a message, then rate limits failed sign-ins per address', async () => {
    const page = await browser.newPage();
    await page.goto(`${gw.url}/dashboard/login`);
    await page.getByLabel('Admin token').fill('not-the-token');
    const answer = page.waitForResponse((r) => r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect((await answer).status()).toBe(401);
    await expect(page.getByText('That token was not accepted.').count()).resolves.toBe(1);
    await expectAccessible(page, 'the sign-in page with an error');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      await page.getByLabel('Admin token').fill(i === 4 ? TOKEN : `wrong-${i}`);
      const r = page.waitForResponse((x) => x.request().method() === 'POST');
      await page.getByRole('button', { name: 'Sign in' }).click();
      statuses.push((await r).status());
    }
    // 5 failures in the window: the 6th attempt, even with the right token, waits.
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    await expect(page.getByText(/Too many failed sign-ins/).count()).resolves.toBe(1);
    await page.close();
  });
});
