// Every page of the console and the public pages, as a person sees them, in headless Chromium against the real
// standalone process (Stripe's API from stripe-mock): at 390 px (a phone) and 1280 px no page scrolls sideways (wide
// tables scroll inside a named, focusable region of their own), the header spans the page, axe finds nothing serious;
// money reads in dollars and cents with the exact figure in the tooltip and the CSV; GET / in a browser lands on a
// page of links while API clients keep the JSON 404. Screenshots of every page at both widths (UPDATE_SCREENSHOTS=1
// rewrites the README's phone shot in docs/screenshots; the rest go to a temporary folder).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { centsOf } from '../../billing/statements/statement.ts';
import { startStripeMock, type StripeMock } from '../billing-stripe/stripe-mock.ts';
import { startGatewayProcess, ROOT, type GatewayProcess } from '../helpers/process.ts';
import { expectAccessible, launchBrowser, signIn } from './browser.ts';

const TOKEN = `layout-console-${randomBytes(12).toString('hex')}`;
const TMP_SHOTS = mkdtempSync(join(tmpdir(), 'svc-layout-shots-'));
const README_SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : TMP_SHOTS;
const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1280, height: 900 },
] as const;
// A long key name and task tag: the widest content a user can put in the tables.
const KEY_NAME = 'nightly-batch-summarizer-europe-west';
let stripe: StripeMock;
let gw: GatewayProcess;
let browser: Browser;
const contexts: Record<string, { context: BrowserContext; page: Page }> = {};
let apiKey = '';

beforeAll(async () => {
  [stripe, browser] = await Promise.all([startStripeMock(), launchBrowser()]);
  gw = await startGatewayProcess({
    SVC_CONSOLE_TOKEN: TOKEN,
    STRIPE_SECRET_KEY: 'sk_test_layout',
    STRIPE_WEBHOOK_SECRET: 'whsec_layout',
    STRIPE_API_BASE: stripe.url,
    SVC_SECURITY_CONTACT: 'mailto:security@example.com',
  });
  for (const w of WIDTHS) {
    const context = await browser.newContext({ viewport: { width: w.width, height: w.height } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, gw.url, TOKEN);
    contexts[w.name] = { context, page };
  }
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await stripe?.stop();
});

async function chat(task: string): Promise<void> {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-mini', messages: [{ role: 'user', content: 'Hello' }], metadata: { task_type: task } }),
  });
  expect(r.status).toBe(200);
  await r.arrayBuffer();
}

interface Fit {
  scrollWidth: number;
  innerWidth: number;
  clientWidth: number;
  header: number;
}

/** No sideways scroll of the page, and the header bar as wide as the viewport (its scrollbar aside). */
async function expectFits(page: Page, what: string): Promise<void> {
  const fit = await page.evaluate<Fit>(`({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    clientWidth: document.documentElement.clientWidth,
    header: document.querySelector('header').getBoundingClientRect().width,
  })`);
  expect(fit.scrollWidth, `${what}: the page scrolls sideways`).toBeLessThanOrEqual(fit.innerWidth);
  // innerWidth counts a vertical scrollbar where the platform draws one; the header spans the rest of the width.
  expect(fit.header, `${what}: the header bar ends before the page does`).toBe(fit.clientWidth);
  expect(fit.innerWidth - fit.clientWidth, `${what}: only a scrollbar between the viewport and the page`).toBeLessThanOrEqual(20);
}

async function look(page: Page, width: string, name: string): Promise<void> {
  await expectFits(page, `${name} at ${width}`);
  await expectAccessible(page, `${name} at ${width}`);
  await page.screenshot({ path: join(TMP_SHOTS, `${name}-${width}.png`), fullPage: true });
}

/** The rounded text, the exact value and the tooltip of the amount in `scope`. */
async function amount(page: Page, selector: string): Promise<{ text: string; value: string; title: string }> {
  const el = page.locator(selector).first();
  return { text: (await el.innerText()).trim(), value: (await el.getAttribute('value')) ?? '', title: (await el.getAttribute('title')) ?? '' };
}

const nanoOf = (usd: string): number => {
  const [whole, frac = ''] = usd.replace('-', '').split('.');
  const n = Number(whole) * 1e9 + Number(frac.padEnd(9, '0'));
  return usd.startsWith('-') ? -n : n;
};

describe('console pages at 390 px and 1280 px', () => {
  it('creates a key with a long name in the dialog at both widths; the dialog page fits', async () => {
    for (const w of WIDTHS) {
      const { page } = contexts[w.name] as { page: Page };
      await page.goto(`${gw.url}/dashboard/keys?account=demo`);
      await page.getByLabel('Name', { exact: true }).fill(w.name === 'phone' ? KEY_NAME : `${KEY_NAME}-2`);
      await page.getByLabel('Monthly budget (USD)').fill('12.345');
      await page.getByRole('button', { name: 'Create key' }).click();
      const dialog = page.getByRole('dialog');
      const key = await dialog.getByLabel('Key').inputValue();
      expect(key).toMatch(/^sk-svc-/);
      if (w.name === 'phone') apiKey = key;
      await look(page, w.name, 'keys-created');
    }
    await chat('summarize-long-documents-for-the-weekly-report');
    await chat('summarize-long-documents-for-the-weekly-report');
    await chat('classify');
  });

  it('every page fits the width, named table regions scroll on their own, axe finds nothing serious', async () => {
    const q = `account=demo&name=${KEY_NAME}`;
    const pages: Array<[string, string]> = [
      ['home', '/'],
      ['sign-in', '/dashboard/login'],
      ['keys', '/dashboard/keys?account=demo'],
      ['rotate', `/dashboard/keys/rotate?${q}`],
      ['revoke', `/dashboard/keys/revoke?${q}`],
      ['usage', '/dashboard/usage?account=demo&group=task'],
      ['usage-by-key', '/dashboard/usage?account=demo&group=key'],
      ['billing', '/dashboard/billing?account=demo'],
      ['activity', '/dashboard/activity?account=demo'],
      ['not-found', '/dashboard/no-such-page'],
      ['status', '/status'],
      ['trust', '/trust'],
    ];
    for (const w of WIDTHS) {
      const { page } = contexts[w.name] as { page: Page };
      for (const [name, path] of pages) {
        await page.goto(`${gw.url}${path}`);
        await look(page, w.name, name);
      }
      // The keys table is wider than a phone: it scrolls inside its region, which is named and takes the focus.
      await page.goto(`${gw.url}/dashboard/keys?account=demo`);
      const region = page.getByRole('region', { name: /^Keys of account demo/ });
      await region.focus();
      const r = await region.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, focused: el === el.ownerDocument.activeElement }));
      expect(r.focused).toBe(true);
      if (w.name === 'phone') expect(r.scroll).toBeGreaterThan(r.client);
      else expect(r.scroll).toBe(r.client);
      if (w.name === 'phone') {
        await page.goto(`${gw.url}/dashboard/usage?account=demo&group=task`);
        await page.screenshot({ path: join(README_SHOTS, 'console-usage-phone.png'), fullPage: true });
      }
    }
  }, 120_000);

  it('shows money to the cent as the statement rounds it, the exact figure in the tooltip, small spends in 4 digits', async () => {
    const { page } = contexts.desktop as { page: Page };
    await page.goto(`${gw.url}/dashboard/billing?account=demo`);
    // The demo account: $11 of credits less three calls' spend, so the balance is a hair under $11.
    const balance = await amount(page, '.stat dd data');
    expect(balance.text).toBe(`$${(centsOf(nanoOf(balance.value)) / 100).toFixed(2)}`);
    expect(balance.text).toBe('$11.00');
    expect(balance.value).toMatch(/^10\.9999\d{5}$/);
    expect(balance.title).toBe(`Exactly $${balance.value}`);
    expect(await page.getByRole('row', { name: /Trial credit/ }).innerText()).toContain('$1.00');

    await page.goto(`${gw.url}/dashboard/usage?account=demo&group=task`);
    const spend = await amount(page, '.cards data');
    expect(11e9 - nanoOf(spend.value)).toBe(nanoOf(balance.value));
    // Below half a cent: the first 4 significant digits of the exact figure, cut.
    expect(spend.text).toBe(`$${/^0\.0*[1-9]\d{0,3}/.exec(spend.value)?.[0].replace(/0+$/, '')}`);
    expect(spend.title).toBe(`Exactly $${spend.value}`);
    const cells = await page
      // The Spend column (the 7th cell: the group's header cell, then 5 counts); Saved by cache is the last.
      .locator('.table-scroll tbody td:nth-child(7) data, .table-scroll tfoot td:nth-child(7) data')
      .evaluateAll((els) => els.map((e) => e.getAttribute('value') ?? ''));
    const total = cells.at(-1) as string;
    expect(total).toBe(spend.value);
    expect(cells.slice(0, -1).reduce((s, v) => s + nanoOf(v), 0)).toBe(nanoOf(total));
    // The CSV keeps the exact figures: the same as the page's values.
    const csv = await page.request.get(`${gw.url}/dashboard/usage.csv?account=demo&group=task`);
    const rows = (await csv.text()).trim().split('\r\n').slice(1);
    expect(rows.map((l) => l.split(',').at(6))).toEqual(cells);

    await page.goto(`${gw.url}/dashboard/keys?account=demo`);
    const row = page.getByRole('row', { name: new RegExp(`^${KEY_NAME} `) });
    const [spent, budget] = await row.locator('data').evaluateAll((els) => els.map((e) => [e.textContent, e.getAttribute('value')]));
    expect(spent?.[1]).toBe(spend.value);
    expect(budget).toEqual(['$12.35', '12.345000000']);
  });
});

describe('GET / lands somewhere useful', () => {
  it('a browser gets a page of links: the console, status, models, trust', async () => {
    const { page } = contexts.phone as { page: Page };
    await page.context().clearCookies();
    const res = await page.goto(`${gw.url}/`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    const doc = await res?.text();
    expect(doc).not.toMatch(/<script(?![^>]*\bsrc=)|<style|\sstyle=/);
    const nav = page.getByRole('navigation', { name: 'Where to go' });
    for (const name of ['Console', 'Status', 'Models', 'Trust and security']) await expect(nav.getByRole('link', { name }).count()).resolves.toBe(1);
    await nav.getByRole('link', { name: 'Models' }).click();
    await page.waitForURL(/\/v1\/models$/);
    expect(JSON.parse(await page.locator('body').innerText())).toMatchObject({ object: 'list' });
    await page.goBack();
    await nav.getByRole('link', { name: 'Console' }).click();
    await page.waitForURL(/\/dashboard\/login/);
    await expect(page.getByLabel('Admin token').count()).resolves.toBe(1);
    await page.goto(`${gw.url}/`);
    await nav.getByRole('link', { name: 'Status' }).click();
    await expect(page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe('Model status');
  });

  it('API clients keep the JSON 404 in OpenAI’s shape', async () => {
    const other = await fetch(`${gw.url}/no-such-path`);
    const shape = (await other.json()) as { error: Record<string, unknown> };
    for (const accept of [undefined, 'application/json', '*/*', 'text/html;q=0, application/json']) {
      const r = await fetch(`${gw.url}/`, { headers: accept ? { accept } : {} });
      expect(r.status, String(accept)).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await r.json()) as { error: Record<string, unknown> };
      expect(body).toEqual({ error: { ...shape.error, message: 'No route GET /.' } });
      expect(r.headers.get('vary')).toMatch(/accept/i);
      expect(r.headers.get('access-control-allow-origin')).toBe(other.headers.get('access-control-allow-origin'));
    }
  });

  it('docs/console.md shows the usage page on a phone (UPDATE_SCREENSHOTS=1 retakes it)', () => {
    const readme = readFileSync(join(ROOT, 'docs', 'console.md'), 'utf8');
    expect(readme.includes('screenshots/console-usage-phone.png'), 'docs/console.md shows screenshots/console-usage-phone.png').toBe(true);
    expect(existsSync(join(ROOT, 'docs', 'screenshots', 'console-usage-phone.png'))).toBe(true);
  });
});
