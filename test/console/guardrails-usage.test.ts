// The usage page's guardrail section in headless Chromium, from Postgres: a standalone gateway on real Redis and
// Postgres (events through the Redis stream and the exporter, facts stored by migration 015) with a Guardrail that
// blocks secrets and masks emails; two keys call it; the page shows blocks and masks by key and guardrail, the
// numbers equal to Postgres', the axe check passes, and no matched text is on the page or in Postgres.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeManifests } from '../helpers/fleet.ts';
import { apiKey, basics, route } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';
import { expectAccessible, launchBrowser, signIn } from './browser.ts';

const TOKEN = `guard-console-${randomBytes(12).toString('hex')}`;
const AWS_KEY = 'AKIAZ7Q3XKQ4PLMNB2WE';
const EMAIL = 'jane.doe@example.com';
let redis: TestRedis;
let db: TestPostgres;
let gw: GatewayProcess;
let browser: Browser;
let page: Page;
const b = basics();
const second = apiKey('second-key', 'acme');

beforeAll(async () => {
  [redis, db, browser] = await Promise.all([startRedis('console-guard'), startPostgres('console_guard'), launchBrowser()]);
  const config = writeManifests([
    ...b.docs,
    ...second.docs,
    route('mock-g', [{ name: 'mock', provider: 'mock' }]),
    {
      apiVersion: 'gateway.svc.dev/v1alpha1',
      kind: 'Guardrail',
      metadata: { name: 'company-data' },
      spec: {
        checks: [
          { detector: 'secrets', action: 'block' },
          { detector: 'email', action: 'mask' },
        ],
      },
    },
  ]);
  gw = await startGatewayProcess({
    SVC_CONFIG: config,
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
  await redis?.stop();
  await db?.stop();
});

async function chat(key: string, content: string): Promise<number> {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-g', messages: [{ role: 'user', content }] }),
  });
  await r.arrayBuffer();
  return r.status;
}

describe('the usage page: guardrails by key and guardrail', () => {
  it('shows the blocks and masks stored in Postgres, by key and guardrail, accessibly and without the matched text', async () => {
    expect(await chat(b.keys.builder, `deploy with ${AWS_KEY}`)).toBe(400);
    expect(await chat(b.keys.builder, `write to ${EMAIL} and to ${EMAIL.replace('jane', 'john')}`)).toBe(200);
    expect(await chat(second.key, `cc ${EMAIL}`)).toBe(200);
    expect(await chat(second.key, `and ${AWS_KEY}`)).toBe(400);
    expect(await chat(second.key, `again ${AWS_KEY}`)).toBe(400);
    expect(await chat(second.key, 'nothing to find')).toBe(200);
    // Through the Redis stream and the exporter: every fact in Postgres.
    await until(
      async () => Number((await db.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM usage_events WHERE guardrails IS NOT NULL')).rows[0]?.n) === 5,
      30_000,
      'five events with guardrail facts in Postgres',
    );
    const facts = await db.pool.query<{ api_key: string; guardrails: unknown }>(
      'SELECT api_key, guardrails FROM usage_events WHERE guardrails IS NOT NULL AND status = 400 ORDER BY created_at',
    );
    expect(facts.rows[0]).toEqual({
      api_key: 'builder-key',
      guardrails: [{ guardrail: 'company-data', check: 'secrets', action: 'block', stage: 'request', kind: 'aws-access-key', count: 1 }],
    });
    const everything = JSON.stringify((await db.pool.query('SELECT * FROM usage_events')).rows);
    expect(everything).not.toContain(AWS_KEY);
    expect(everything).not.toContain(EMAIL);

    await signIn(page, gw.url, TOKEN);
    await page.goto(`${gw.url}/dashboard/usage?account=acme`);
    await expect(page.getByRole('heading', { name: 'Guardrails' }).count()).resolves.toBe(1);
    const table = page.getByRole('table', { name: 'Guardrail blocks and masks by key and guardrail' });
    const rows = await table
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => Array.from((tr as unknown as { cells: ArrayLike<{ textContent: string | null }> }).cells, (c) => (c.textContent ?? '').trim())),
      );
    // Key, guardrail, calls matched, blocked, values masked, matches logged.
    expect(rows).toEqual([
      ['builder-key', 'company-data', '2', '1', '2', '0'],
      ['second-key', 'company-data', '3', '2', '1', '0'],
    ]);
    await expect(table.getByRole('rowheader', { name: 'second-key' }).count()).resolves.toBe(1);
    const cards = await page.locator('.cards').nth(1).textContent();
    expect(cards).toContain('Calls blocked3');
    expect(cards).toContain('Values masked3');
    const html = await page.content();
    expect(html).not.toContain(AWS_KEY);
    expect(html).not.toContain(EMAIL);
    await expectAccessible(page, 'the usage page with its guardrails table');
  });
});
