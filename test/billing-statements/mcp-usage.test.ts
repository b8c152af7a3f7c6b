// MCP tool calls beside the models wherever an account owner reads their usage: a standalone process on Redis and
// Postgres (its exporter writing the rows) takes one model call and tool calls of the built-in mock McpServer (paid,
// one priced per tool, one failing with isError). /v1/me names the servers the key may use and counts the tools'
// spend; the usage rows carry model mcp:<server>/<tool>; the console's usage page grouped by model (Chromium, axe)
// shows them beside the model, its CSV is the table; the monthly statement has them as tool-call lines, in its CSV
// and its PDF (read back by pdftotext).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, launchBrowser, signIn } from '../console/browser.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { account, apiKey, mcpServer, plan, route } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

const run = promisify(execFile);
const TOKEN = `mcp-usage-${randomBytes(12).toString('hex')}`;
const key = apiKey('agent', 'acme');
let redis: TestRedis;
let db: TestPostgres;
let up: FakeUpstream;
let gw: GatewayProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [redis, db, up, browser] = await Promise.all([startRedis('mcp-usage'), startPostgres('mcp_usage'), startFakeUpstream('model'), launchBrowser()]);
  gw = await startGatewayProcess({
    SVC_CONFIG: writeManifests([
      plan('pro', { tier: 1 }),
      account('acme', 'pro', { trialCreditUsd: 10 }),
      ...key.docs,
      route('smart', [{ name: 'primary', provider: 'openai', baseUrl: up.baseUrl }]),
      mcpServer('demo-tools', { mock: {}, pricing: { perCallUsd: 0.0001, tools: [{ name: 'add', perCallUsd: 0.0002 }] } }),
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
  await Promise.all([redis?.stop(), db?.stop(), up?.close()]);
});

async function toolCall(name: string, args: Record<string, unknown>): Promise<{ isError?: boolean }> {
  const res = await fetch(`${gw.url}/mcp/demo-tools`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { isError?: boolean } }).result;
}

const ADD = 200_000;
const ECHO = 100_000;

describe('tool calls in the usage views', () => {
  it('/v1/me, the usage rows, the usage page and its CSV, and the statement show the tool calls beside the model', async () => {
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'smart', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(200);
    await chat.text();
    expect((await toolCall('add', { a: 1, b: 2 })).isError).toBeFalsy();
    expect((await toolCall('add', { a: 3, b: 4 })).isError).toBeFalsy();
    expect((await toolCall('add', { a: 'x', b: 4 })).isError).toBe(true);
    expect((await toolCall('echo', { text: 'hi' })).isError).toBeFalsy();

    await until(async () => (await db.pool.query("SELECT 1 FROM usage_events WHERE account = 'acme'")).rowCount === 5, 30_000, '5 usage rows');
    const rows = await db.pool.query<{ model: string; n: string; cost: string }>(
      `SELECT coalesce(served_model, requested_model) AS model, count(*)::text AS n, sum(cost_nano)::text AS cost
       FROM usage_events WHERE account = 'acme' AND endpoint = 'mcp' GROUP BY 1 ORDER BY 1`,
    );
    expect(rows.rows).toEqual([
      { model: 'mcp:demo-tools/add', n: '3', cost: String(2 * ADD) },
      { model: 'mcp:demo-tools/echo', n: '1', cost: String(ECHO) },
    ]);
    const all = await db.pool.query<{ cost: string; model: string }>("SELECT sum(cost_nano)::text AS cost FROM usage_events WHERE account = 'acme'");
    const spent = Number(all.rows[0]?.cost);
    const modelCost = spent - 2 * ADD - ECHO;
    expect(modelCost).toBeGreaterThan(0);

    // /v1/me: the servers the key may use, the month's spend with the tools' in it.
    const me = (await (await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${key.key}` } })).json()) as Record<string, unknown>;
    expect(me).toMatchObject({ mcp_servers: ['demo-tools'], mcp_tool_whitelist: null });
    expect(me.month_spend_usd).toBeCloseTo(spent / 1e9, 9);
    expect(JSON.stringify(me)).not.toContain(key.key);

    await signIn(page, gw.url, TOKEN);
    await page.goto(`${gw.url}/dashboard/usage?account=acme&group=model`);
    const table = await page
      .locator('table tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.querySelector('data')?.getAttribute('value') ?? c.textContent ?? '')),
      );
    expect(table.map((r) => r[0]).sort()).toEqual(['mcp:demo-tools/add', 'mcp:demo-tools/echo', 'smart']);
    const add = table.find((r) => r[0] === 'mcp:demo-tools/add');
    expect(add?.slice(1, 7)).toEqual(['3', '0', '0', '0', '0', ((2 * ADD) / 1e9).toFixed(9)]);
    await expectAccessible(page, 'the usage page with tool calls');
    // The CSV is the table: same rows in the same order, the same figures.
    const csv = (await (await page.request.get(`${gw.url}/dashboard/usage.csv?account=acme&group=model`)).text()).trim().split('\r\n');
    expect(csv[0]).toBe(
      'Model,Requests,Errors,Fallbacks,Tokens in,Tokens out,Spend (USD),Cache hits,Saved by cache (USD),Search units,Audio seconds,Characters,Images,Batch lines,Batch spend (USD)',
    );
    expect(csv.slice(1, -1).map((l) => l.split(',').slice(0, 7))).toEqual(table.map((r) => r.slice(0, 7)));
    expect(csv).toContain(`mcp:demo-tools/add,3,0,0,0,0,0.000400000,0,0.000000000,0,0,0,0,0,0.000000000`);

    const month = new Date().toISOString().slice(0, 7);
    const statement = await page.request.get(`${gw.url}/dashboard/billing/statements/${month}.csv?account=acme`);
    expect(statement.status()).toBe(200);
    const lines = (await statement.text()).split('\r\n');
    const tools = lines.filter((l) => l.startsWith('usage,,Tool calls,mcp:demo-tools/'));
    expect(tools.map((l) => l.split(',').slice(3, 10))).toEqual([
      ['mcp:demo-tools/add', 'agent', '', '3', '0', '0', String(2 * ADD)],
      ['mcp:demo-tools/echo', 'agent', '', '1', '0', '0', String(ECHO)],
    ]);
    expect(lines.find((l) => l.startsWith('usage,,Usage,smart,'))?.split(',')[9]).toBe(String(modelCost));
    expect(lines.find((l) => l.startsWith('total,') && l.includes(',Usage,'))?.split(',')[9]).toBe(String(spent));

    const pdf = await page.request.get(`${gw.url}/dashboard/billing/statements/${month}.pdf?account=acme`);
    expect(pdf.status()).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'mcp-statement-'));
    writeFileSync(join(dir, 's.pdf'), await pdf.body());
    const { stdout } = await run('pdftotext', ['-layout', join(dir, 's.pdf'), '-']);
    expect(stdout).toMatch(/mcp:demo-tools\/add\s+3\b/);
    expect(stdout).toMatch(/mcp:demo-tools\/echo\s+1\b/);
  });
});
