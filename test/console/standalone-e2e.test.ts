// The console end to end, in headless Chromium against the real standalone process on real Redis and Postgres:
// sign in, create a key and read it from the dialog (Copy), call the API with it and a task tag, find the call in
// usage by task and in the CSV (totals = rows = Postgres), rotate with a grace period that survives a restart,
// revoke (401), then search the page, Redis, Postgres and the log for the keys: 0 hits. Screenshots for docs/console.md.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, ROOT, type GatewayProcess } from '../helpers/process.ts';
import { docText } from '../helpers/docs.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { expectAccessible, launchBrowser, signIn } from './browser.ts';
import { occurrences, postgresText, redisText } from './secrets.ts';

const TOKEN = `e2e-console-${randomBytes(12).toString('hex')}`;
// The docs' screenshots (docs/screenshots/) are rewritten only when asked, as golden files are; otherwise the
// same shots go to a temporary folder, so a test run leaves the tree clean.
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : mkdtempSync(join(tmpdir(), 'svc-console-shots-'));
let redis: TestRedis;
let db: TestPostgres;
let gw: GatewayProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let env: Record<string, string>;
const logs: string[] = [];

beforeAll(async () => {
  [redis, db, browser] = await Promise.all([startRedis('console-e2e'), startPostgres('console_e2e'), launchBrowser()]);
  env = {
    REDIS_URL: redis.url,
    SVC_REDIS_PREFIX: redis.prefix,
    DATABASE_URL: db.url,
    SVC_KEY_PEPPER: randomBytes(32).toString('hex'),
    SVC_CONSOLE_TOKEN: TOKEN,
  };
  gw = await startGatewayProcess(env);
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (gw) logs.push(gw.output());
  await gw?.stop();
  await redis?.stop();
  await db?.stop();
});

async function chat(key: string, task?: string): Promise<number> {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-mini', messages: [{ role: 'user', content: 'Hello' }], ...(task ? { metadata: { task_type: task } } : {}) }),
  });
  await r.arrayBuffer();
  return r.status;
}

/** The table's cells as text; an amount as its exact value (the page shows it rounded, the exact one in <data value>). */
async function tableText(p: Page): Promise<string[][]> {
  return p
    .locator('table')
    .last()
    .locator('tbody tr, tfoot tr')
    .evaluateAll((rows) =>
      rows.map((r) =>
        Array.from(
          (r as unknown as { cells: ArrayLike<{ textContent: string | null; querySelector(s: string): { getAttribute(a: string): string | null } | null }> })
            .cells,
          (c) => c.querySelector('data')?.getAttribute('value') ?? (c.textContent ?? '').trim(),
        ),
      ),
    );
}

async function keyFromDialog(p: Page): Promise<string> {
  const dialog = p.getByRole('dialog');
  const key = await dialog.getByLabel('Key').inputValue();
  expect(key).toMatch(/^sk-svc-[0-9A-Za-z]{38}$/);
  await dialog.getByRole('button', { name: 'Copy' }).click();
  await expect(p.evaluate('navigator.clipboard.readText()')).resolves.toBe(key);
  expect(await dialog.locator('pre').textContent()).toContain(`Authorization: Bearer ${key}`);
  return key;
}

const keys: string[] = [];

describe('console, standalone, end to end', () => {
  it('signs in, creates a key shown once in a dialog with Copy and a curl example', async () => {
    await signIn(page, gw.url, TOKEN);
    await page.getByLabel('Account', { exact: true }).selectOption('demo');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByLabel('Name', { exact: true }).fill('e2e-bot');
    await page.getByLabel('Monthly budget (USD)').fill('5');
    await page.getByLabel('RPM limit').fill('60');
    await page.getByLabel('Models').fill('mock-*');
    await page.getByRole('button', { name: 'Create key' }).click();
    keys.push(await keyFromDialog(page));
    await expectAccessible(page, 'the keys page with the new-key dialog');
    await page.getByRole('link', { name: 'Done, close' }).click();
    await expect(page.getByRole('dialog').count()).resolves.toBe(0);
    const row = page.getByRole('row', { name: /e2e-bot/ });
    await expect(row.textContent()).resolves.toMatch(/Active[\s\S]*never[\s\S]*\$0\.00 \/ \$5\.00[\s\S]*60[\s\S]*mock-\*/);
    await expectAccessible(page, 'the keys page');
  });

  it('the key calls the API; the call shows in usage by task and in the CSV; totals = rows = Postgres', async () => {
    const key = keys[0] as string;
    expect(await chat(key, 'summarize')).toBe(200);
    expect(await chat(key, 'summarize')).toBe(200);
    expect(await chat(key)).toBe(200);
    await page.reload();
    await expect(page.getByRole('row', { name: /e2e-bot/ }).textContent()).resolves.toMatch(
      /\d{4}-\d\d-\d\d \d\d:\d\d UTC[\s\S]*\d{4}-\d\d-\d\d \d\d:\d\d UTC/,
    );
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByLabel('Group by').selectOption('task');
    await page.getByRole('button', { name: 'Show' }).click();
    expect(new URL(page.url()).searchParams.get('group')).toBe('task');
    // The exporter moves the events from the Redis stream to Postgres within a second or so.
    const end = Date.now() + 20_000;
    while (!(await page.getByRole('rowheader', { name: 'summarize' }).count()) && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 300));
      await page.reload();
    }
    const table = await tableText(page);
    expect(table.map((r) => r.slice(0, 2))).toEqual([
      ['summarize', '2'],
      ['(untagged)', '1'],
      ['Total', '3'],
    ]);
    const rows = table.slice(0, -1);
    const total = table.at(-1) as string[];
    for (let c = 1; c < total.length; c++) {
      // Exact: the amounts' exact values are in nano-USD steps (9 decimals), so they add up as integers.
      const nano = (v: string | undefined): number => Math.round(Number(v) * (c === 6 || c === 8 ? 1e9 : 1));
      expect(rows.reduce((s, r) => s + nano(r[c]), 0)).toBe(nano(total[c]));
    }
    const pg = await db.pool.query<{ n: string; usd: string; tin: string }>(
      "SELECT count(*)::text AS n, to_char(sum(cost_nano) / 1e9, 'FM0.000000000') AS usd, sum(input_tokens)::text AS tin FROM usage_events WHERE account = 'demo'",
    );
    expect([total[1], total[4], total[6]]).toEqual([pg.rows[0]?.n, pg.rows[0]?.tin, pg.rows[0]?.usd]);
    const cards = await page.locator('.cards').textContent();
    await expect(page.locator('.cards data').first().getAttribute('value')).resolves.toBe(total[6]);
    expect(cards).toContain('Requests3');
    await expect(page.getByRole('img', { name: /Spend per day/ }).count()).resolves.toBe(1);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    const csv = readFileSync(await download.path(), 'utf8')
      .trim()
      .split('\r\n')
      .map((l) => l.split(','));
    expect(csv[0]).toEqual([
      'Task',
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
    expect(csv.slice(1)).toEqual(table);
    await expectAccessible(page, 'the usage page');
    await page.screenshot({ path: join(SHOTS, 'console-usage.png'), fullPage: true });
  });

  it('rotates with a grace period: a new key at once, the old one pending, and that survives a restart', async () => {
    await page.goto(`${gw.url}/dashboard/keys?account=demo`);
    await page.getByRole('link', { name: 'Rotate e2e-bot' }).click();
    await expectAccessible(page, 'the rotate page');
    await page.getByLabel('Grace period').selectOption({ label: '1 hour' });
    await page.getByRole('button', { name: 'Rotate key' }).click();
    keys.push(await keyFromDialog(page));
    await expect(page.getByRole('dialog').textContent()).resolves.toContain('e2e-bot-2');
    await page.getByRole('link', { name: 'Done, close' }).click();
    await expect(page.getByRole('row', { name: /^e2e-bot / }).textContent()).resolves.toMatch(/Active, revoked at .* UTC \(rotated\)/);
    expect(await chat(keys[0] as string)).toBe(200);
    expect(await chat(keys[1] as string, 'summarize')).toBe(200);

    logs.push(gw.output());
    await gw.stop();
    gw = await startGatewayProcess(env);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
    // Sessions live in Redis: the browser is still signed in after the restart.
    await page.goto(`${gw.url}/dashboard/keys?account=demo`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/keys');
    await expect(page.getByRole('row', { name: /^e2e-bot / }).textContent()).resolves.toMatch(/Active, revoked at .* UTC \(rotated\)/);
    expect(await chat(keys[0] as string)).toBe(200);
    await page.screenshot({ path: join(SHOTS, 'console-keys.png'), fullPage: true });
  }, 90_000);

  it('revokes after the name is typed; the key gets 401 at once', async () => {
    await page.getByRole('link', { name: 'Revoke e2e-bot', exact: true }).click();
    await expectAccessible(page, 'the revoke page');
    await page.getByLabel('Type the key name to confirm').fill('e2e-bo');
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await expect(page.getByText('Type e2e-bot exactly to confirm.').count()).resolves.toBe(1);
    await page.getByLabel('Type the key name to confirm').fill('e2e-bot');
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Key e2e-bot is revoked.');
    await expect(page.getByRole('row', { name: /^e2e-bot / }).textContent()).resolves.toContain('Revoked');
    expect(await chat(keys[0] as string)).toBe(401);
    expect(await chat(keys[1] as string)).toBe(200);
  });

  it('docs/console.md shows both pages (UPDATE_SCREENSHOTS=1 retakes them)', () => {
    for (const shot of ['console-keys.png', 'console-usage.png']) {
      expect(docText('docs/console.md')).toContain(`](screenshots/${shot})`);
      expect(existsSync(join(ROOT, 'docs', 'screenshots', shot))).toBe(true);
      expect(existsSync(join(SHOTS, shot))).toBe(true);
    }
  });

  it('after the dialogs, the keys are nowhere: not the page, Redis, Postgres or the log', async () => {
    await page.reload();
    const html = await page.content();
    const stores = `${await redisText(redis.client)}\n${await postgresText(db.pool)}`;
    expect(stores).toContain('e2e-bot');
    for (const key of keys) {
      expect(occurrences(html, key), 'page').toBe(0);
      expect(occurrences(stores, key), 'Redis and Postgres').toBe(0);
      expect(occurrences(logs.join('\n') + gw.output(), key), 'log').toBe(0);
    }
  });
});
