// /status in headless Chromium: a row per model with its 90 bars and uptime, the open incident above, the history
// below, no script needed, and axe-core finds no serious or critical violation. Takes the screenshot of docs/availability.md
// (UPDATE_SCREENSHOTS=1 rewrites docs/screenshots/status.png; otherwise it goes to a temporary folder).
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../gateway/availability/uptime.ts';
import type { State } from '../../gateway/availability/types.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { basics, route } from '../helpers/manifests.ts';
import { ROOT } from '../helpers/process.ts';
import { docText } from '../helpers/docs.ts';
import { expectAccessible, launchBrowser } from '../console/browser.ts';
import { startAvailabilityGateway, type AvailabilityGateway } from './harness.ts';

const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : mkdtempSync(join(tmpdir(), 'svc-status-shots-'));
let up: FakeUpstream;
let down: FakeUpstream;
let gw: AvailabilityGateway;
let browser: Browser;
let page: Page;

/** 89 past days of hourly rounds for a model, with the outages given (day index from the oldest, hours). */
async function seed(model: string, outages: Array<[number, number, State]>): Promise<void> {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  for (let d = 0; d < 89; d++) {
    for (let h = 0; h < 24; h++) {
      const o = outages.find(([day, hours]) => day === d && h < hours);
      await gw.avail.history.addRound({
        model,
        at: today - (89 - d) * DAY_MS + h * 3_600_000,
        intervalMs: 3_600_000,
        state: o ? o[2] : 'operational',
        probes: [],
      });
    }
  }
}

beforeAll(async () => {
  [up, down] = await Promise.all([startFakeUpstream('up'), startFakeUpstream('down')]);
  const t = { connectMs: 500, firstByteMs: 500, idleMs: 500, totalMs: 2000 };
  gw = await startAvailabilityGateway(
    [
      ...basics().docs,
      route(
        'gpt-main',
        [
          { name: 'openai-eu', provider: 'openai', baseUrl: up.baseUrl, timeouts: t },
          { name: 'openai-us', provider: 'openai', baseUrl: down.baseUrl, weight: 0, timeouts: t },
        ],
        { probe: { intervalSeconds: 60 } },
      ),
      route('embed-small', [{ name: 'embed-eu', provider: 'openai', baseUrl: up.baseUrl, timeouts: t }], {
        type: 'embeddings',
        probe: { intervalSeconds: 60 },
      }),
      route('legacy-chat', [{ name: 'old-dc', provider: 'openai', baseUrl: down.baseUrl, timeouts: t }], { probe: { intervalSeconds: 60 } }),
    ],
    { env: { SVC_PROBE_INTERVAL_SECONDS: '60' }, pagesEnv: { SVC_SECURITY_CONTACT: 'security@example.com', REDIS_URL: 'rediss://redis.internal:6380' } },
  );
  await seed('gpt-main', [
    [70, 3, 'partial_outage'],
    [84, 1, 'major_outage'],
  ]);
  await seed('embed-small', []);
  await seed('legacy-chat', [
    [40, 6, 'major_outage'],
    [86, 24, 'degraded_performance'],
  ]);
  // A past incident, resolved: two bad rounds, two good ones.
  down.fallback = () => ({ kind: 'status', status: 503 });
  await gw.rounds(2, 'legacy-chat', 'gpt-main');
  down.fallback = () => ({ kind: 'reply' });
  await gw.rounds(2, 'legacy-chat', 'gpt-main');
  // The one open now.
  down.fallback = () => ({ kind: 'status', status: 503 });
  await gw.rounds(3, 'legacy-chat', 'gpt-main', 'embed-small');
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await Promise.all([up?.close(), down?.close()]);
});

describe('/status in a browser', () => {
  it('shows the models, their bars and uptime, the open incident first and the history; accessible', async () => {
    const errors: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`${gw.url}/status`);
    expect(await page.getByRole('status').textContent()).toBe('Major Service Outage');
    const rows = page.getByRole('table', { name: 'Current state and uptime of each model' }).getByRole('row');
    expect(await rows.count()).toBe(4);
    const legacy = rows.filter({ hasText: 'legacy-chat' });
    expect(await legacy.locator('.avail').textContent()).toBe('Major outage');
    const gpt = rows.filter({ hasText: 'gpt-main' });
    expect(await gpt.locator('.avail').textContent()).toBe('Operational');
    expect(await page.getByRole('img', { name: /^Daily uptime of gpt-main, 90 days/ }).count()).toBe(1);
    expect(await page.locator('rect.day').count()).toBe(3 * 90);
    expect(await page.locator('rect.day.major_outage').count()).toBeGreaterThanOrEqual(1);
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
    expect(headings.slice(0, 2)).toEqual(['Open incidents', 'Models']);
    expect(headings).toContain('Incident history (90 days)');
    const open = page.locator('section', { has: page.getByRole('heading', { name: 'Open incidents' }) });
    expect(await open.getByRole('heading', { name: 'legacy-chat: a major outage' }).count()).toBe(1);
    const history = page.locator('section', { has: page.getByRole('heading', { name: 'Incident history (90 days)' }) });
    expect(await history.getByText('resolved', { exact: true }).count()).toBeGreaterThanOrEqual(1);
    expect(await page.getByText('Uptime = 1 − (time in major outage').count()).toBe(1);
    expect(errors).toEqual([]);
    await expectAccessible(page, '/status');
    await page.screenshot({ path: join(SHOTS, 'status.png'), fullPage: true });
  });

  it("/trust: generated from the config (the subprocessors are the routes' hosts), accessible", async () => {
    await page.goto(`${gw.url}/trust`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Trust and security');
    const subs = page.getByRole('table', { name: 'Upstream providers and hosts' }).getByRole('row');
    expect(await subs.count()).toBe(3);
    const hosts = (await subs.allTextContents()).join(' ');
    for (const f of [up, down]) expect(hosts).toContain(new URL(f.url).host);
    expect(await page.getByRole('table', { name: 'In transit' }).getByRole('row', { name: /Redis/ }).textContent()).toContain('TLS');
    expect(await page.getByRole('link', { name: 'security@example.com' }).getAttribute('href')).toBe('mailto:security@example.com');
    expect(await page.getByText('self-hosted: none claimed').count()).toBe(1);
    await expectAccessible(page, '/trust');
    const txt = await fetch(`${gw.url}/.well-known/security.txt`);
    expect(txt.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await txt.text()).toMatch(/^Contact: mailto:security@example\.com\nExpires: \d{4}-\d\d-\d\dT/m);
  });

  it('docs/availability.md shows it', () => {
    expect(docText('docs/availability.md')).toContain('](screenshots/status.png)');
    expect(existsSync(join(ROOT, 'docs', 'screenshots', 'status.png'))).toBe(true);
    expect(existsSync(join(SHOTS, 'status.png'))).toBe(true);
  });
});
