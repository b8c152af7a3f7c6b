// Completions, rerank and moderation calls beside chat wherever an account owner reads their usage: a standalone
// process on Redis and Postgres (its exporter writing the rows and the daily rollup) takes calls of each kind on the
// mock provider. The rollup keeps each kind apart; the console's usage page grouped by kind (Chromium, axe) shows a
// row per kind with a rerank's search units in their own column, and its CSV is the table; the monthly statement's
// CSV says each usage line's kind with the search units in their column, and its PDF (read back by pdftotext) has
// the usage by kind.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, launchBrowser, signIn } from '../console/browser.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

const run = promisify(execFile);
const TOKEN = `kinds-usage-${randomBytes(12).toString('hex')}`;
const key = apiKey('rag', 'acme');
const UNIT_NANO = 2_000_000;
const mock = (name: string): Array<{ name: string; provider: 'mock' }> => [{ name, provider: 'mock' }];
let redis: TestRedis;
let db: TestPostgres;
let gw: GatewayProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [redis, db, browser] = await Promise.all([startRedis('kinds-usage'), startPostgres('kinds_usage'), launchBrowser()]);
  gw = await startGatewayProcess({
    SVC_CONFIG: writeManifests([
      plan('pro', { tier: 1 }),
      account('acme', 'pro', { trialCreditUsd: 10 }),
      ...key.docs,
      route('chat-m', mock('mock-chat')),
      route('code-m', mock('mock-code'), { type: 'completions', fim: true }),
      route('rerank-m', mock('mock-rerank'), { type: 'rerank', pricing: { inputPerMTokUsd: 0, perSearchUnitUsd: UNIT_NANO / 1e9 } }),
      route('moderation-m', mock('mock-moderation'), { type: 'moderation', pricing: { inputPerMTokUsd: 0.1 } }),
    ]),
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
  await Promise.all([redis?.stop(), db?.stop()]);
});

async function call(path: string, body: object): Promise<void> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, path).toBe(200);
  await res.arrayBuffer();
}

describe('kinds of call in the usage views', () => {
  it('the rollup, the usage page by kind and its CSV, and the statement tell chat, completions, rerank and moderation apart', async () => {
    await call('/v1/chat/completions', { model: 'chat-m', messages: [{ role: 'user', content: 'hi' }] });
    await call('/v1/completions', { model: 'code-m', prompt: 'def add(a, b):', suffix: 'print(add(1, 2))', max_tokens: 16 });
    // 150 documents: two search units; then 3 documents: one.
    await call('/v1/rerank', { model: 'rerank-m', query: 'doc 7', documents: Array.from({ length: 150 }, (_, i) => `doc ${i}`) });
    await call('/cohere/v2/rerank', { model: 'rerank-m', query: 'capital', documents: ['Paris', 'Berlin', 'Rome'] });
    await call('/v1/moderations', { model: 'moderation-m', input: 'a calm sentence' });

    await until(async () => (await db.pool.query("SELECT 1 FROM usage_events WHERE account = 'acme'")).rowCount === 5, 30_000, '5 usage rows');
    const daily = await db.pool.query<{ kind: string; requests: string; output: string; cost: string }>(
      `SELECT kind, sum(requests)::text AS requests, sum(output_tokens)::text AS output, sum(cost_nano)::text AS cost
       FROM usage_daily WHERE account = 'acme' GROUP BY kind ORDER BY kind`,
    );
    expect(daily.rows.map((r) => [r.kind, r.requests])).toEqual([
      ['chat', '1'],
      ['completions', '1'],
      ['moderation', '1'],
      ['rerank', '2'],
    ]);
    const rerank = daily.rows.find((r) => r.kind === 'rerank');
    expect(rerank).toMatchObject({ output: '3', cost: String(3 * UNIT_NANO) });

    await signIn(page, gw.url, TOKEN);
    await page.goto(`${gw.url}/dashboard/usage?account=acme`);
    await page.getByLabel('Group by').selectOption({ label: 'Kind' });
    await page.getByRole('button', { name: 'Show' }).click();
    await expect(page.getByRole('table', { name: 'Usage by kind' }).count()).resolves.toBe(1);
    const header = await page.locator('table thead th').allTextContents();
    expect(header).toEqual([
      'Kind',
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
    const table = await page
      .locator('table tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.querySelector('data')?.getAttribute('value') ?? c.textContent ?? '')),
      );
    expect(table.map((r) => r[0]).sort()).toEqual(['Chat', 'Moderation', 'Rerank', 'Text completions']);
    const row = (kind: string): string[] => table.find((r) => r[0] === kind) ?? [];
    // A rerank's output count is search units, in their own column: its Tokens out is 0.
    expect([row('Rerank')[1], row('Rerank')[5], row('Rerank')[6], row('Rerank')[9]]).toEqual(['2', '0', ((3 * UNIT_NANO) / 1e9).toFixed(9), '3']);
    expect(Number(row('Text completions')[5])).toBeGreaterThan(0);
    expect(row('Text completions')[9]).toBe('0');
    expect(row('Moderation')[9]).toBe('0');
    const cards = (await page.locator('.cards').textContent()) ?? '';
    expect(cards).toContain('Search units (rerank)3');
    await expectAccessible(page, 'the usage page by kind');
    // The CSV is the table.
    const csv = (await (await page.request.get(`${gw.url}/dashboard/usage.csv?account=acme&group=kind`)).text()).trim().split('\r\n');
    expect(csv[0]).toBe(
      'Kind,Requests,Errors,Fallbacks,Tokens in,Tokens out,Spend (USD),Cache hits,Saved by cache (USD),Search units,Audio seconds,Characters,Images,Batch lines,Batch spend (USD)',
    );
    expect(
      csv
        .slice(1, -1)
        .map((l) => l.split(','))
        .sort(),
    ).toEqual(table.map((r) => r.map(String)).sort());

    const month = new Date().toISOString().slice(0, 7);
    const statement = await page.request.get(`${gw.url}/dashboard/billing/statements/${month}.csv?account=acme`);
    expect(statement.status()).toBe(200);
    const lines = (await statement.text()).split('\r\n');
    const head = lines[0]?.split(',') ?? [];
    expect(head.slice(-6)).toEqual(['search_units', 'audio_seconds', 'characters', 'images', 'batch_requests', 'batch_amount_nano']);
    const usage = lines.filter((l) => l.startsWith('usage,')).map((l) => l.split(','));
    expect(usage.map((c) => [c[2], c[3]]).sort()).toEqual([
      ['Moderation', 'moderation-m'],
      ['Rerank', 'rerank-m'],
      ['Text completions', 'code-m'],
      ['Usage', 'chat-m'],
    ]);
    const rerankLine = usage.find((c) => c[3] === 'rerank-m') ?? [];
    expect([rerankLine[6], rerankLine[8], rerankLine[9], rerankLine[head.indexOf('search_units')]]).toEqual(['2', '0', String(3 * UNIT_NANO), '3']);

    const pdf = await page.request.get(`${gw.url}/dashboard/billing/statements/${month}.pdf?account=acme`);
    expect(pdf.status()).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'kinds-statement-'));
    writeFileSync(join(dir, 's.pdf'), await pdf.body());
    const { stdout } = await run('pdftotext', ['-layout', join(dir, 's.pdf'), '-']);
    expect(stdout).toContain('Usage by kind of call');
    expect(stdout).toMatch(/Search units/);
    expect(stdout).toMatch(/Rerank\s+2\s+\d+\s+0\s+3\s+0\.01/);
    expect(stdout).toMatch(/Text completions\s+1\b/);
  });
});
