// Cache hits and what they saved, where an account owner reads their usage: the usage rows in Postgres (written by
// the exporter of a standalone process on Redis), the console's usage page and CSV (Chromium, axe) and the monthly
// statement. One miss and two hits at hitCostFraction 0.5: every view says 2 hits and the same saved amount.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeManifests } from '../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';
import { expectAccessible, launchBrowser, signIn } from '../console/browser.ts';
import type { FakeUpstream } from '../fakes/upstream.ts';
import { cachedRoute, cacheSetup, echoUpstream, openai, type CacheSetup } from './setup.ts';

const TOKEN = `cache-console-${randomBytes(12).toString('hex')}`;
let redis: TestRedis;
let db: TestPostgres;
let up: FakeUpstream;
let gw: GatewayProcess;
let browser: Browser;
let page: Page;
let s: CacheSetup;

beforeAll(async () => {
  [redis, db, up, browser] = await Promise.all([startRedis('cache-views'), startPostgres('cache_views'), echoUpstream(), launchBrowser()]);
  s = cacheSetup([cachedRoute('half-hit', up, { hitCostFraction: 0.5 })]);
  gw = await startGatewayProcess({
    SVC_CONFIG: writeManifests(s.docs),
    REDIS_URL: redis.url,
    SVC_REDIS_PREFIX: redis.prefix,
    DATABASE_URL: db.url,
    SVC_KEY_PEPPER: randomBytes(32).toString('hex'),
    SVC_CONSOLE_TOKEN: TOKEN,
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await Promise.all([redis?.stop(), db?.stop(), up?.close()]);
});

// 12 input tokens at 1040 and 5 output at 2080 nano-USD: 22 880 for the miss, 11 440 for each hit, 11 440 saved each.
const MISS = 12 * 1040 + 5 * 2080;
const HIT = MISS / 2;

describe('cache hits in the usage views', () => {
  it('Postgres rows, the usage page and CSV, and the statement show 2 hits and what they saved', async () => {
    const client = openai(gw.url, s.keys.a1);
    const req = { model: 'half-hit', temperature: 0, messages: [{ role: 'user' as const, content: 'x'.repeat(45) }] };
    const states: Array<string | null> = [];
    for (let i = 0; i < 3; i++) {
      const r = await client.chat.completions.create(req).withResponse();
      states.push(r.response.headers.get('x-svc-cache'));
      // The answer is stored after the call settles: wait for it before the next call.
      if (i === 0) await until(async () => (await redis.client.hlen(`${redis.prefix}:{a:acme}:cache`)) === 1, 5000, 'the entry stored');
    }
    expect(states).toEqual(['miss', 'hit', 'hit']);

    await until(async () => (await db.pool.query("SELECT 1 FROM usage_events WHERE account = 'acme'")).rowCount === 3, 30_000, '3 usage rows');
    const rows = await db.pool.query<{ cache: string; cost_nano: string; cache_saved_nano: string; upstream: string }>(
      "SELECT cache, cost_nano::text, cache_saved_nano::text, upstream FROM usage_events WHERE account = 'acme' ORDER BY created_at",
    );
    expect(rows.rows).toEqual([
      { cache: 'miss', cost_nano: String(MISS), cache_saved_nano: '0', upstream: 'half-hit-t' },
      { cache: 'hit', cost_nano: String(HIT), cache_saved_nano: String(MISS - HIT), upstream: 'cache' },
      { cache: 'hit', cost_nano: String(HIT), cache_saved_nano: String(MISS - HIT), upstream: 'cache' },
    ]);
    const daily = await db.pool.query<{ hits: string; saved: string; cost: string }>(
      "SELECT sum(cache_hits)::text AS hits, sum(cache_saved_nano)::text AS saved, sum(cost_nano)::text AS cost FROM usage_daily WHERE account = 'acme'",
    );
    expect(daily.rows[0]).toEqual({ hits: '2', saved: String(2 * (MISS - HIT)), cost: String(MISS + 2 * HIT) });
    // The ledger (Redis) equals the usage rows.
    const spent = Number(await redis.client.hget(`${redis.prefix}:{a:acme}:acct`, 'spent'));
    expect(spent).toBe(MISS + 2 * HIT);

    await signIn(page, gw.url, TOKEN);
    await page.goto(`${gw.url}/dashboard/usage?account=acme&group=model`);
    const cards = (await page.locator('.cards').textContent()) ?? '';
    expect(cards).toContain('Cache hits2');
    expect(cards).toContain('Saved by cache');
    const header = await page.locator('table thead th').allTextContents();
    expect(header).toEqual([
      'Model',
      'Requests',
      'Errors',
      'Fallbacks',
      'Tokens in',
      'Tokens out',
      'Spend (USD)',
      'Cache hits',
      'Saved by cache (USD)',
      'Search units',
      'Audio seconds',
      'Characters',
      'Images',
      'Batch lines',
      'Batch spend (USD)',
    ]);
    const row = await page
      .getByRole('row', { name: /half-hit/ })
      .locator('td')
      .allTextContents();
    expect(row[0]).toBe('3');
    expect(row[6]).toBe('2');
    // The row's amounts: Spend, Saved by cache, Batch spend.
    const saved = await page
      .getByRole('row', { name: /half-hit/ })
      .locator('td data')
      .nth(1)
      .getAttribute('value');
    expect(saved).toBe(((2 * (MISS - HIT)) / 1e9).toFixed(9));
    await expectAccessible(page, 'the usage page with cache hits');
    const csv = await (await page.request.get(`${gw.url}/dashboard/usage.csv?account=acme&group=model`)).text();
    expect(csv).toContain(`half-hit,3,0,0,36,15,${((MISS + 2 * HIT) / 1e9).toFixed(9)},2,${((2 * (MISS - HIT)) / 1e9).toFixed(9)}`);

    const month = new Date().toISOString().slice(0, 7);
    const statement = await page.request.get(`${gw.url}/dashboard/billing/statements/${month}.csv?account=acme`);
    expect(statement.status()).toBe(200);
    const line = (await statement.text()).split('\r\n').find((l) => l.startsWith('info,'));
    expect(line).toContain('Saved by the response cache (2 hits');
    expect(line).toContain(`,2,,,${2 * (MISS - HIT)},`);
  });
});
