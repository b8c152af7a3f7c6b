// Headless Chromium from Debian driven by playwright-core (it downloads nothing), axe-core injected into pages,
// and the console's sign-in as a user does it (by label and role).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { expect } from 'vitest';

const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

const HOW_TO_GET =
  `Chromium is needed for the console's browser tests and was not found at ${CHROMIUM}: install it ` +
  '(Debian/Ubuntu: `apt-get install chromium`; .ci/run does this) or set SVC_CHROMIUM to a Chromium or Chrome binary. ' +
  'Never `npx playwright install`: the tests use the system browser.';

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(HOW_TO_GET);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** axe-core on the page as it is now: no serious or critical violation (the message lists them). */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  // Injected through the DevTools protocol's evaluate, which the page's CSP does not govern.
  await page.evaluate(AXE);
  const violations = await page.evaluate<AxeViolation[]>(`axe.run(document, { resultTypes: ['violations'] })
    .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`);
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    bad.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    `axe on ${what}`,
  ).toEqual([]);
}

export async function signIn(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/dashboard/keys`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard\/keys/);
}

/** Through the OpenID provider's own pages (oidc-provider's development login: any login and password, then consent). */
export async function throughProvider(page: Page, issuer: string, login: string): Promise<void> {
  await page.waitForURL((u) => u.origin === issuer);
  await page.getByPlaceholder('Enter any login').fill(login);
  await page.getByPlaceholder('and password').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

/**
 * Signs `login` in to the console at `base` as a person does, in a context of its own (`options` for it): the keys
 * page, "Sign in with Example SSO", the provider's pages, and back on the keys page.
 */
export async function ssoSignIn(
  browser: Browser,
  base: string,
  issuer: string,
  login: string,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  await page.goto(`${base}/dashboard/keys`);
  await page.getByRole('button', { name: 'Sign in with Example SSO' }).click();
  await throughProvider(page, issuer, login);
  await page.waitForURL(`${base}/dashboard/keys`);
  return { context, page };
}
