// The audit trail end to end: the real standalone process (npm start) with Postgres (DATABASE_URL) and a real OpenID
// provider (oidc-provider, its own login and consent pages), people signed in through it in headless Chromium. Alice
// (manage-keys, view-activity) and Bob (create-own-keys only) create, rotate and revoke keys in account demo; the
// Activity page and its CSV show each action attributed to the right person, with their IdP subject; Bob gets 403 on
// the page and the CSV, asked for directly too; a failed sign-in is a console-wide record, which Carol (view-activity
// on every account) sees; a user name a spreadsheet would run as a formula is escaped in the CSV; no key, token,
// session or client secret is in any record, the CSV or the table.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { until } from '../helpers/until.ts';
import { expectAccessible, launchBrowser, throughProvider } from './browser.ts';

const CLIENT = { id: 'svc-console', secret: 'activity-test-client-secret-0123456789' };
const ADMIN_TOKEN = 'activity-test-admin-token-0123456789';
const WRONG_TOKEN = 'wrong-admin-token-attempted-9876543210';
const FORMULA_NAME = '=HYPERLINK("http://evil.example")@example.com';
const ACCESS = `groups:
  "oidc:team-a":
    - accounts: [demo]
      verbs: [get, manage-keys, view-usage, view-activity]
  "oidc:team-b":
    - accounts: [demo]
      verbs: [get, create-own-keys]
users:
  carol@example.com:
    - accounts: ["*"]
      verbs: [get, view-activity]
`;

let idp: TestOidcProvider;
let db: TestPostgres;
let gw: GatewayProcess;
let browser: Browser;
/** Every secret the tests saw: none may be in a record, the CSV or the page. */
const secrets = new Set<string>([ADMIN_TOKEN, WRONG_TOKEN, CLIENT.secret]);

beforeAll(async () => {
  [idp, db, browser] = await Promise.all([
    startOidcProvider({
      alice: { email: 'alice@example.com', groups: ['team-a'] },
      bob: { email: 'bob@example.com', groups: ['team-b'] },
      carol: { email: 'carol@example.com', groups: [] },
      mallory: { email: FORMULA_NAME, groups: [] },
    }),
    startPostgres('console-activity'),
    launchBrowser(),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'svc-activity-'));
  writeFileSync(join(dir, 'client-secret'), `${CLIENT.secret}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'access.yaml'), ACCESS);
  gw = await startGatewayProcess({
    DATABASE_URL: db.url,
    SVC_CONSOLE_TOKEN: ADMIN_TOKEN,
    SVC_CONSOLE_OIDC_ISSUER: idp.issuer,
    SVC_CONSOLE_OIDC_CLIENT_ID: CLIENT.id,
    SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE: join(dir, 'client-secret'),
    SVC_CONSOLE_OIDC_SCOPES: 'openid email groups',
    SVC_CONSOLE_OIDC_USERNAME_CLAIM: 'email',
    SVC_CONSOLE_OIDC_GROUPS_PREFIX: 'oidc:',
    SVC_CONSOLE_OIDC_NAME: 'Example SSO',
    SVC_CONSOLE_ACCESS_FILE: join(dir, 'access.yaml'),
    SVC_TRUST_PROXY: '127.0.0.1',
  });
  idp.register(gw.url, CLIENT);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await idp?.stop();
  await db?.stop();
});

let clients = 0;

/** A browser of its own, at its own client address (the console believes X-Forwarded-For from 127.0.0.1 here). */
async function fresh(): Promise<{ context: BrowserContext; page: Page; ip: string }> {
  clients += 1;
  const ip = `198.51.100.${clients}`;
  const context = await browser.newContext({ extraHTTPHeaders: { 'x-forwarded-for': ip }, acceptDownloads: true });
  context.setDefaultTimeout(15_000);
  return { context, page: await context.newPage(), ip };
}

async function signInAs(login: string): Promise<{ context: BrowserContext; page: Page; ip: string }> {
  const s = await fresh();
  await s.page.goto(`${gw.url}/dashboard/keys`);
  await s.page.getByRole('button', { name: 'Sign in with Example SSO' }).click();
  await throughProvider(s.page, idp.issuer, login);
  await s.page.waitForURL(`${gw.url}/dashboard/keys`);
  for (const c of await s.context.cookies()) if (c.name === 'svc_console' && c.value) secrets.add(c.value);
  return s;
}

/** Create, rotate (now) and revoke the successor, through the console's own forms. */
async function keyLifecycle(page: Page, name: string): Promise<void> {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  secrets.add(await page.getByRole('dialog').getByLabel('Key').inputValue());
  await page.goto(`${gw.url}/dashboard/keys?account=demo`);
  await page.getByRole('link', { name: `Rotate ${name}`, exact: true }).click();
  await page.getByLabel('Grace period').selectOption('now');
  await page.getByRole('button', { name: 'Rotate key' }).click();
  secrets.add(await page.getByRole('dialog').getByLabel('Key').inputValue());
  await page.goto(`${gw.url}/dashboard/keys?account=demo`);
  await page.getByRole('link', { name: `Revoke ${name}-2`, exact: true }).click();
  await page.getByLabel('Type the key name to confirm').fill(`${name}-2`);
  await page.getByRole('button', { name: 'Revoke key' }).click();
  await expect(page.getByText(`Key ${name}-2 is revoked.`).count()).resolves.toBe(1);
}

/** The table's rows as their cells' text. */
async function tableRows(page: Page): Promise<string[][]> {
  return page.locator('table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => (c.textContent ?? '').trim())));
}

/** Simple CSV reader for the tests (quoted cells, doubled quotes). */
function parseCsv(text: string): Array<Record<string, string>> {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  const [head, ...body] = rows;
  return body.map((r) => Object.fromEntries((head ?? []).map((h, i) => [h, r[i] ?? ''])));
}

async function download(page: Page): Promise<string> {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
  return readFileSync((await dl.path()) as string, 'utf8');
}

function expectNoSecret(text: string, where: string, anyKey = true): void {
  for (const s of secrets) expect(text.includes(s), `${where} holds a secret`).toBe(false);
  if (anyKey) expect(text, where).not.toMatch(/sk-svc-[0-9A-Za-z]{38}/);
}

let alice: Awaited<ReturnType<typeof signInAs>>;
let bob: Awaited<ReturnType<typeof signInAs>>;

describe('console audit trail and Activity page', () => {
  it('records two people’s key actions, each attributed to the one who did it', async () => {
    alice = await signInAs('alice');
    await keyLifecycle(alice.page, 'alices-key');
    bob = await signInAs('bob');
    await keyLifecycle(bob.page, 'bobs-key');
    // Bob tries Alice's key by posting the form directly: refused, and recorded as his refused attempt.
    const csrf = (await bob.page.locator('input[name=_csrf]').first().getAttribute('value')) as string;
    const r = await bob.context.request.post(`${gw.url}/dashboard/keys/revoke`, {
      form: { _csrf: csrf, account: 'demo', name: 'alices-key', confirm: 'alices-key' },
      maxRedirects: 0,
    });
    expect(r.status()).toBe(403);

    await alice.page.goto(`${gw.url}/dashboard/keys`);
    await alice.page.getByRole('link', { name: 'Activity' }).click();
    await alice.page.waitForURL(/\/dashboard\/activity/);
    await expect(alice.page.getByRole('heading', { name: 'Activity' }).count()).resolves.toBe(1);
    // The records are written once each answer has gone: wait for the last (Bob's refusal).
    await until(
      async () => {
        await alice.page.reload();
        return (await tableRows(alice.page)).some((c) => c[4]?.startsWith('refused'));
      },
      15_000,
      'Bob’s refused revoke on the Activity page',
    );
    const rows = await tableRows(alice.page);
    const summary = rows.map((c) => [c[1], c[2], c[3], c[4]].join(' | '));
    // Newest first; each row names the person (and their IdP subject) and the key, never a key.
    expect(summary).toEqual([
      'bob@example.combob | Key revoked (oidc) | alices-key | refused (403)',
      'bob@example.combob | Key revoked (oidc) | bobs-key-2 | success (200)',
      'bob@example.combob | Key rotated (oidc) | bobs-key | success (201)',
      'bob@example.combob | Key created (oidc) | bobs-key | success (201)',
      'alice@example.comalice | Key revoked (oidc) | alices-key-2 | success (200)',
      'alice@example.comalice | Key rotated (oidc) | alices-key | success (201)',
      'alice@example.comalice | Key created (oidc) | alices-key | success (201)',
    ]);
    expect(rows[2]?.[5]).toBe('Rotated to bobs-key-2.');
    expect(rows[0]?.[6]).toBe(bob.ip);
    expect(rows[6]?.[6]).toBe(alice.ip);
    expect(rows[0]?.[7]).toContain('Chrome');
    await expectAccessible(alice.page, 'the Activity page');
    expectNoSecret(await alice.page.content(), 'the Activity page');
  });

  it('filters by action and person, and the CSV holds exactly the filtered records', async () => {
    const page = alice.page;
    await page.getByLabel('Action').selectOption('key-revoked');
    await page.getByLabel('Person').fill('BOB');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/action=key-revoked/);
    const rows = await tableRows(page);
    expect(rows.map((c) => c[3])).toEqual(['alices-key', 'bobs-key-2']);
    const csv = parseCsv(await download(page));
    expect(csv.map((r) => [r.person, r.subject, r.method, r.action, r.object, r.outcome, r.status])).toEqual([
      ['bob@example.com', 'bob', 'oidc', 'key-revoked', 'alices-key', 'refused', '403'],
      ['bob@example.com', 'bob', 'oidc', 'key-revoked', 'bobs-key-2', 'success', '200'],
    ]);
    expect(csv.every((r) => r.account === 'demo' && r.client_ip === bob.ip)).toBe(true);
    // A date range that ends before today: nothing.
    await page.goto(`${gw.url}/dashboard/activity?account=demo&to=2020-01-01`);
    await expect(page.getByText('Nothing recorded with these filters.').count()).resolves.toBe(1);
    // The whole account's CSV: every action of both people, and no secret.
    await page.goto(`${gw.url}/dashboard/activity?account=demo`);
    const all = await download(page);
    expectNoSecret(all, 'the CSV');
    const byPerson = parseCsv(all).map((r) => `${r.person} ${r.action} ${r.object}`);
    expect(byPerson).toContain('alice@example.com key-created alices-key');
    expect(byPerson).toContain('bob@example.com key-rotated bobs-key');
    // A filter that cannot be one: a clear 400.
    expect((await page.goto(`${gw.url}/dashboard/activity?account=demo&from=yesterday`))?.status()).toBe(400);
  });

  it('refuses the page and the CSV to a person without view-activity, asked for directly too', async () => {
    for (const path of [
      '/dashboard/activity',
      '/dashboard/activity?account=demo',
      '/dashboard/activity.csv?account=demo',
      '/dashboard/activity.csv?account=*',
    ]) {
      const r = await bob.context.request.get(`${gw.url}${path}`, { maxRedirects: 0 });
      expect(r.status(), path).toBe(403);
      expect(await r.text(), path).not.toContain('alices-key');
    }
    const r = await bob.page.goto(`${gw.url}/dashboard/activity`);
    expect(r?.status()).toBe(403);
    await expect(bob.page.getByRole('alert').textContent()).resolves.toContain('view-activity');
    // Alice may see demo's activity, not the console-wide sign-ins (that takes every account).
    expect((await alice.context.request.get(`${gw.url}/dashboard/activity.csv?account=*`)).status()).toBe(403);
  });

  it('records sign-ins (with the IdP subject), a failed sign-in and a sign-out, console-wide', async () => {
    // A failed sign-in: a wrong admin token typed into the form.
    const stranger = await fresh();
    await stranger.page.goto(`${gw.url}/dashboard/login`);
    await stranger.page.getByLabel('Admin token').fill(WRONG_TOKEN);
    await stranger.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(stranger.page.getByText('That token was not accepted.').count()).resolves.toBe(1);
    await stranger.context.close();
    // A person whose name is a formula signs in (and has no right to anything).
    const mallory = await signInAs('mallory');
    await mallory.page.getByRole('button', { name: 'Sign out' }).click();
    await mallory.context.close();

    const carol = await signInAs('carol');
    await carol.page.goto(`${gw.url}/dashboard/activity?account=*`);
    await expect(carol.page.getByRole('region', { name: /^Sign-ins and sign-outs \(whole console\)/ }).count()).resolves.toBe(1);
    await expectAccessible(carol.page, 'the console-wide Activity page');
    const csv = parseCsv(await download(carol.page));
    const line = (r: Record<string, string>): string => [r.person, r.subject, r.method, r.action, r.outcome, r.status, r.client_ip].join(' ');
    const lines = csv.map(line);
    expect(lines).toContain(`alice@example.com alice oidc sign-in success 200 ${alice.ip}`);
    expect(lines).toContain(`bob@example.com bob oidc sign-in success 200 ${bob.ip}`);
    expect(lines).toContain(`  admin sign-in refused 401 ${stranger.ip}`);
    // The formula is written as text (a leading apostrophe), for both the sign-in and the sign-out.
    expect(csv.filter((r) => r.person === `'${FORMULA_NAME}`).map((r) => r.action)).toEqual(['sign-out', 'sign-in']);
    expect(csv.some((r) => (r.person ?? '').startsWith('='))).toBe(false);
    expectNoSecret(JSON.stringify(csv), 'the console-wide CSV');
    // Carol's scopes: every account and the console-wide records.
    await expect(carol.page.getByLabel('Account').locator('option').allTextContents()).resolves.toContain('Sign-ins (whole console)');
    await carol.context.close();
  });

  it('keeps the records in Postgres, indexed by account and time, with nothing secret', async () => {
    const { rows } = await db.pool.query<{ n: string }>("SELECT count(*)::text AS n FROM console_audit WHERE account = 'demo'");
    expect(Number(rows[0]?.n)).toBe(7);
    const idx = await db.pool.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE tablename = 'console_audit'");
    expect(idx.rows.map((r) => r.indexdef).join('\n')).toContain('(account, at DESC, id DESC)');
    const dump = await db.pool.query<{ t: string }>("SELECT string_agg(c::text, E'\\n') AS t FROM console_audit c");
    expectNoSecret(dump.rows[0]?.t ?? '', 'console_audit');
    // The log (npm start prints its demo keys there once, by design): none of the keys, tokens or sessions above.
    expectNoSecret(gw.output(), 'the process log', false);
  });
});
