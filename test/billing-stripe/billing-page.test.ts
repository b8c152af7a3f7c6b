// The billing page in headless Chromium against the real standalone process, Stripe's API from stripe-mock: the
// balance and ledger, Add credits (bounded; redirects to the Checkout URL stripe-mock returned), the Payment link
// (copyable, carrying the account), a signed webhook event then listed as a top-up; axe on every state; and without
// Stripe settings the page says payments are not set up. Takes the screenshot of docs/billing.md (UPDATE_SCREENSHOTS=1).
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, ROOT, type GatewayProcess } from '../helpers/process.ts';
import { expectAccessible, launchBrowser, signIn } from '../console/browser.ts';
import { refund, session, signed } from './events.ts';
import { startStripeMock, type StripeMock } from './stripe-mock.ts';

const TOKEN = `billing-console-${randomBytes(12).toString('hex')}`;
const SECRET = 'whsec_billing_page_test';
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : mkdtempSync(join(tmpdir(), 'svc-billing-shots-'));
let stripe: StripeMock;
let gw: GatewayProcess;
let bare: GatewayProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [stripe, browser] = await Promise.all([startStripeMock(), launchBrowser()]);
  [gw, bare] = await Promise.all([
    startGatewayProcess({ SVC_CONSOLE_TOKEN: TOKEN, STRIPE_SECRET_KEY: 'sk_test_page', STRIPE_WEBHOOK_SECRET: SECRET, STRIPE_API_BASE: stripe.url }),
    startGatewayProcess({ SVC_CONSOLE_TOKEN: TOKEN }),
  ]);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([gw?.stop(), bare?.stop()]);
  await stripe?.stop();
});

const text = (l: Locator): Promise<string> => l.innerText();
let balanceBefore = 0;
const balance = async (): Promise<number> => Number((await text(page.locator('.stat dd').first())).replace(/[$,]/g, '').replace('−', '-'));

async function deliver(body: object): Promise<void> {
  const m = signed(body as never, SECRET);
  const r = await fetch(`${gw.url}/billing/stripe/webhook`, { method: 'POST', headers: m.headers, body: m.body });
  expect(r.status).toBe(200);
}

describe('billing page', () => {
  it('says payments are not set up without the Stripe settings', async () => {
    await signIn(page, bare.url, TOKEN);
    await page.goto(`${bare.url}/dashboard/billing?account=demo`);
    expect(await text(page.getByRole('status'))).toContain('Payments are not set up');
    expect(await page.getByRole('button', { name: 'Add credits' }).count()).toBe(0);
    await expectAccessible(page, 'billing without Stripe');
  });

  it('shows the balance, the ledger and a copyable Payment link for the account', async () => {
    await signIn(page, gw.url, TOKEN);
    await page.goto(`${gw.url}/dashboard/billing?account=demo`);
    expect((await text(page.getByRole('heading', { level: 1 }))).trim()).toBe('Billing');
    const link = await page.getByLabel('Payment link', { exact: true }).inputValue();
    expect(new URL(link).searchParams.get('client_reference_id')).toBe('demo');
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(link);
    expect(await text(page.locator('table'))).toContain('Trial credit');
    balanceBefore = await balance();
    await expectAccessible(page, 'billing');
  });

  it('refuses an amount out of bounds next to the field', async () => {
    await page.getByLabel('Amount (USD)').fill('1');
    await page.getByRole('button', { name: 'Add credits' }).click();
    expect(await text(page.locator('#amount-error'))).toContain('from $5 to $10,000');
    expect(await page.getByLabel('Amount (USD)').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page, 'billing with an error');
  });

  it('Add credits redirects to the Checkout Session URL stripe-mock returned', async () => {
    let checkout = '';
    await page.route('https://checkout.stripe.com/**', async (route) => {
      checkout = route.request().url();
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Stripe Checkout (stand-in)</title><h1>Checkout</h1>' });
    });
    await page.getByLabel('Amount (USD)').fill('25.50');
    await page.getByRole('button', { name: 'Add credits' }).click();
    await page.waitForURL(/checkout\.stripe\.com/);
    expect(checkout).toMatch(/^https:\/\/checkout\.stripe\.com\/pay\/c\/cs_test_/);
  });

  it('lists a credited payment, and a refund, once the signed events arrive', async () => {
    const paid = session({ account: 'demo', cents: 2550, pi: 'pi_page_1' });
    await deliver(paid);
    await deliver(paid);
    await deliver(refund('pi_page_1', 550, 're_page_1'));
    await page.goto(`${gw.url}/dashboard/billing?account=demo&paid=1`);
    expect(await text(page.getByRole('status'))).toContain('Thank you');
    const rows = page.locator('table tbody tr');
    expect(await rows.filter({ hasText: 'Top-up (Stripe)' }).count()).toBe(1);
    expect(await text(rows.filter({ hasText: 'Top-up (Stripe)' }))).toContain(String(paid.data.object.id));
    expect(await text(rows.filter({ hasText: 'Top-up (Stripe)' }))).toContain('$25.50');
    expect(await text(rows.filter({ hasText: 'Refund' }))).toContain('−$5.50');
    expect(Math.round(((await balance()) - balanceBefore) * 100)).toBe(2000); // 25.50 paid, 5.50 refunded
    await expectAccessible(page, 'billing after a payment');
    await page.screenshot({ path: join(SHOTS, 'console-billing.png'), fullPage: true });
  });
});
