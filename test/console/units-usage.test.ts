// Each kind in its own unit wherever an account owner reads their usage: a standalone process on Redis and Postgres
// (its exporter writing the rows and the daily rollup) takes a chat call, a transcription (a 1 s clip), a speech, an
// image call priced per image and one priced by tokens, and a batch of two chat lines on the mock provider. The
// console's usage page grouped by kind (Chromium, axe) shows the audio seconds, the characters, the images (whatever
// the route's price) and the batch lines with their cost beside tokens, and its CSV is the
// table; the memory source (standalone without Postgres) gives the same figures from the same events; the monthly
// statement's CSV and PDF (read back by pdftotext) say each kind's quantity in its unit, and the batch lines.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI, { toFile } from 'openai';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStatementSource, PostgresStatementSource } from '../../billing/statements/statement-source.ts';
import { buildStatement } from '../../billing/statements/statement.ts';
import { MemoryUsageSource } from '../../console/usage/memory-source.ts';
import { PostgresUsageSource } from '../../console/usage/postgres-source.ts';
import { summarize, type GroupBy } from '../../console/usage/report.ts';
import type { Endpoint, UsageEvent } from '../../gateway/usage/event.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { MOCK_IMAGE_TOKENS } from '../../gateway/providers/mock/image.ts';
import { ROOT, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';
import { expectAccessible, launchBrowser, signIn } from './browser.ts';

const run = promisify(execFile);
const TOKEN = `units-usage-${randomBytes(12).toString('hex')}`;
const key = apiKey('media', 'acme');
const IMAGE_NANO = 11_000_000;
const mock = (name: string): Array<{ name: string; provider: 'mock' }> => [{ name, provider: 'mock' }];
let redis: TestRedis;
let db: TestPostgres;
let gw: GatewayProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [redis, db, browser] = await Promise.all([startRedis('units-usage'), startPostgres('units_usage'), launchBrowser()]);
  gw = await startGatewayProcess({
    SVC_CONFIG: writeManifests([
      plan('builder', { tier: 2 }),
      account('acme', 'builder', { trialCreditUsd: 10 }),
      ...key.docs,
      route('chat-m', mock('mock-chat')),
      route('whisper-m', mock('mock-whisper'), { type: 'transcription', pricing: { inputPerMTokUsd: 0, perMinuteUsd: 0.006 } }),
      route('tts-m', mock('mock-tts'), { type: 'speech', pricing: { inputPerMTokUsd: 0, perMCharactersUsd: 15 } }),
      route('image-m', mock('mock-image'), { type: 'image', pricing: { inputPerMTokUsd: 0, perImage: [{ size: '1024x1024', usd: IMAGE_NANO / 1e9 }] } }),
      route('image-t', mock('mock-image-t'), { type: 'image', maxOutputTokens: 1000, pricing: { inputPerMTokUsd: 5, outputPerMTokUsd: 40 } }),
    ]),
    REDIS_URL: redis.url,
    SVC_REDIS_PREFIX: redis.prefix,
    DATABASE_URL: db.url,
    SVC_KEY_PEPPER: randomBytes(32).toString('hex'),
    SVC_CONSOLE_TOKEN: TOKEN,
    SVC_BATCH_POLL_SECONDS: '1',
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

/** The account's events as the exporter wrote them, back as UsageEvents (what the memory sources hold). */
async function eventsFromPostgres(): Promise<UsageEvent[]> {
  const r = await db.pool.query<Record<string, unknown>>(
    `SELECT event_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at, account, api_key,
            task_type, endpoint, requested_model, served_model, fallback, status, input_tokens, output_tokens,
            cost_nano::text AS cost_nano, fee_nano::text AS fee_nano, cache, billed_unit, billed_units::text AS billed_units, batch
     FROM usage_events WHERE account = 'acme'`,
  );
  return r.rows.map((x) => ({
    eventId: x.event_id as string,
    createdAt: x.created_at as string,
    account: x.account as string,
    apiKey: x.api_key as string,
    taskType: (x.task_type as string | null) || null,
    endpoint: x.endpoint as Endpoint,
    requestedModel: x.requested_model as string,
    servedModel: x.served_model as string | null,
    upstream: null,
    fallback: x.fallback as boolean,
    fallbackReason: null,
    status: x.status as number,
    errorCode: null,
    stream: false,
    inputTokens: x.input_tokens as number,
    outputTokens: x.output_tokens as number,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costNano: Number(x.cost_nano),
    feeNano: Number(x.fee_nano),
    latencyMs: 0,
    ttftMs: null,
    ...(x.cache ? { cache: x.cache as 'hit' | 'miss' | 'bypass' } : {}),
    ...(x.billed_unit ? { unit: x.billed_unit as 'seconds' | 'characters', units: Number(x.billed_units) } : {}),
    ...(x.batch ? { batch: true } : {}),
  }));
}

async function makeCalls(): Promise<void> {
  const auth = { authorization: `Bearer ${key.key}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const chat = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ model: 'chat-m', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(chat.status).toBe(200);
  await chat.arrayBuffer();
  const form = new FormData();
  form.set('model', 'whisper-m');
  form.set('file', new Blob([readFileSync(`${ROOT}gateway/config/demo-clip.wav`)]), 'clip.wav');
  const t = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: auth, body: form });
  expect(t.status).toBe(200);
  await t.arrayBuffer();
  const s = await fetch(`${gw.url}/v1/audio/speech`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ model: 'tts-m', input: 'twelve chars', voice: 'alloy', response_format: 'wav' }),
  });
  expect(s.status).toBe(200);
  await s.arrayBuffer();
  const img = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ model: 'image-m', prompt: 'a red square', n: 2, size: '1024x1024' }),
  });
  expect(img.status).toBe(200);
  await img.arrayBuffer();
  // Priced by tokens: its output count is image tokens, its images counted apart.
  const byTokens = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ model: 'image-t', prompt: 'three blue circles', n: 3, size: '1024x1024' }),
  });
  expect(byTokens.status).toBe(200);
  await byTokens.arrayBuffer();
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key.key, maxRetries: 0 });
  const lines = ['a', 'b'].map((w) =>
    JSON.stringify({
      custom_id: w,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'chat-m', messages: [{ role: 'user', content: w }], max_tokens: 8 },
    }),
  );
  const input = await client.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'), purpose: 'batch' });
  const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  await until(async () => (await client.batches.retrieve(batch.id)).status === 'completed', 60_000, 'the batch completed');
  await until(async () => (await db.pool.query("SELECT 1 FROM usage_events WHERE account = 'acme'")).rowCount === 7, 60_000, '7 usage rows');
}

type Table = string[][];

/** One CSV line's cells: quoted cells (a description with a comma) unquoted. */
function cells(line: string): string[] {
  return [...line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g)].map((m) => (m[1] !== undefined ? m[1].replace(/""/g, '"') : (m[2] ?? '')));
}

async function tableOf(p: Page): Promise<Table> {
  return p
    .locator('table tbody tr, table tfoot tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.querySelector('data')?.getAttribute('value') ?? c.textContent ?? '')),
    );
}

describe('each kind in its own unit in the usage views', () => {
  it('the usage page and its CSV, the memory source and the statement show audio seconds, characters, images and batch lines', async () => {
    await makeCalls();
    const batchCost = await db.pool.query<{ n: string; cost: string }>(
      'SELECT count(*)::text AS n, sum(cost_nano)::text AS cost FROM usage_events WHERE batch',
    );
    expect(batchCost.rows[0]?.n).toBe('2');
    const batchNano = Number(batchCost.rows[0]?.cost);
    expect(batchNano).toBeGreaterThan(0);

    await signIn(page, gw.url, TOKEN);
    await page.goto(`${gw.url}/dashboard/usage?account=acme`);
    await page.getByLabel('Group by').selectOption({ label: 'Kind' });
    await page.getByRole('button', { name: 'Show' }).click();
    const usage = page.getByRole('table', { name: 'Usage by kind' });
    await expect(usage.count()).resolves.toBe(1);
    for (const name of ['Audio seconds', 'Characters', 'Images', 'Batch lines', 'Batch spend (USD)']) {
      await expect(usage.getByRole('columnheader', { name, exact: true }).count(), name).resolves.toBe(1);
    }
    const header = await usage.locator('thead th').allTextContents();
    const col = (name: string): number => header.indexOf(name);
    const table = await tableOf(page);
    const row = (kind: string): string[] => table.find((r) => r[0] === kind) ?? [];
    expect(table.map((r) => r[0]).sort()).toEqual(['Chat', 'Images', 'Speech', 'Total', 'Transcriptions']);
    // The 1 s clip, the 12 characters of "twelve chars", 2 + 3 images (a per-image price counts images as its output, a
    // token price image tokens).
    const imageTokensIn = await db.pool.query<{ n: string }>("SELECT input_tokens::text AS n FROM usage_events WHERE requested_model = 'image-t'");
    const tokensIn = Number(imageTokensIn.rows[0]?.n);
    expect(tokensIn).toBeGreaterThan(0);
    expect([row('Transcriptions')[col('Requests')], row('Transcriptions')[col('Audio seconds')], row('Transcriptions')[col('Characters')]]).toEqual([
      '1',
      '1',
      '0',
    ]);
    expect([row('Speech')[col('Requests')], row('Speech')[col('Characters')], row('Speech')[col('Audio seconds')]]).toEqual(['1', '12', '0']);
    expect([row('Images')[col('Requests')], row('Images')[col('Tokens out')], row('Images')[col('Images')], row('Images')[col('Characters')]]).toEqual([
      '2',
      String(2 + 3 * MOCK_IMAGE_TOKENS),
      '5',
      '0',
    ]);
    expect([row('Transcriptions')[col('Images')], row('Speech')[col('Images')], row('Chat')[col('Images')]]).toEqual(['0', '0', '0']);
    // The batch's two lines are chat calls: in the Chat row, with what they cost at the batch price.
    expect([row('Chat')[col('Requests')], row('Chat')[col('Batch lines')], row('Chat')[col('Batch spend (USD)')]]).toEqual([
      '3',
      '2',
      (batchNano / 1e9).toFixed(9),
    ]);
    expect([row('Total')[col('Audio seconds')], row('Total')[col('Characters')], row('Total')[col('Images')], row('Total')[col('Batch lines')]]).toEqual([
      '1',
      '12',
      '5',
      '2',
    ]);
    const cards = (await page.locator('.cards').textContent()) ?? '';
    expect(cards).toContain('Audio seconds (transcriptions)1');
    expect(cards).toContain('Characters (speech)12');
    expect(cards).toContain('Images5');
    expect(cards).toContain('Batch lines2');
    await expectAccessible(page, 'the usage page with audio, images and batches');

    // The CSV is the table, total row included.
    const csv = (await (await page.request.get(`${gw.url}/dashboard/usage.csv?account=acme&group=kind`)).text()).trim().split('\r\n');
    expect(csv[0]).toBe(
      'Kind,Requests,Errors,Fallbacks,Tokens in,Tokens out,Spend (USD),Cache hits,Saved by cache (USD),Search units,Audio seconds,Characters,Images,Batch lines,Batch spend (USD)',
    );
    expect(csv.slice(1).map((l) => l.split(','))).toEqual(table);

    // The memory source (standalone without Postgres) folds the same events into the same figures.
    const events = await eventsFromPostgres();
    const day = new Date().toISOString().slice(0, 10);
    for (const groupBy of ['kind', 'model', 'key'] as GroupBy[]) {
      const q = { accounts: ['acme'], from: day, to: day, groupBy };
      const fromPg = summarize(await new PostgresUsageSource(db.pool).cells(q), day, day);
      const fromMemory = summarize(await new MemoryUsageSource(async () => events).cells(q), day, day);
      expect(fromMemory, groupBy).toEqual(fromPg);
    }

    // The statement: each kind's quantity in its unit, the batch lines at the batch price; Postgres and memory agree.
    const month = day.slice(0, 7);
    const pgData = await new PostgresStatementSource(db.pool).month('acme', month);
    const memData = await new MemoryStatementSource({ events: async () => events, configCredits: async () => [], entries: async () => [], startedAt: 0 }).month(
      'acme',
      month,
    );
    expect(buildStatement('acme', month, null, memData).quantities).toEqual(buildStatement('acme', month, null, pgData).quantities);

    const statement = await page.request.get(`${gw.url}/dashboard/billing/statements/${month}.csv?account=acme`);
    expect(statement.status()).toBe(200);
    const lines = (await statement.text()).split('\r\n').map(cells);
    const head = lines[0] ?? [];
    expect(head.slice(-6)).toEqual(['search_units', 'audio_seconds', 'characters', 'images', 'batch_requests', 'batch_amount_nano']);
    const at = (name: string): number => head.indexOf(name);
    const usageLine = (model: string): string[] => lines.find((c) => c[0] === 'usage' && c[3] === model) ?? [];
    expect([usageLine('whisper-m')[2], usageLine('whisper-m')[at('audio_seconds')]]).toEqual(['Transcriptions', '1']);
    expect([usageLine('tts-m')[2], usageLine('tts-m')[at('characters')]]).toEqual(['Speech', '12']);
    expect([usageLine('image-m')[2], usageLine('image-m')[at('images')], usageLine('image-m')[at('output_tokens')]]).toEqual(['Images', '2', '2']);
    expect([usageLine('image-t')[at('images')], usageLine('image-t')[at('output_tokens')]]).toEqual(['3', String(3 * MOCK_IMAGE_TOKENS)]);
    const imageNano = Number(usageLine('image-m')[at('amount_nano')]) + Number(usageLine('image-t')[at('amount_nano')]);
    expect(Number(usageLine('image-m')[at('amount_nano')])).toBe(2 * IMAGE_NANO);
    const imageText = `Images \u2014 5 images, ${tokensIn} tokens in, ${(3 * MOCK_IMAGE_TOKENS).toLocaleString('en-US')} image tokens out`;
    expect([usageLine('chat-m')[at('batch_requests')], usageLine('chat-m')[at('batch_amount_nano')]]).toEqual(['2', String(batchNano)]);
    const kinds = lines.filter((c) => c[0] === 'kind').map((c) => [c[2], c[at('requests')], c[at('amount_nano')]]);
    expect(kinds).toContainEqual(['Transcriptions \u2014 1 second of audio', '1', usageLine('whisper-m')[at('amount_nano')]]);
    expect(kinds).toContainEqual(['Speech \u2014 12 characters', '1', usageLine('tts-m')[at('amount_nano')]]);
    expect(kinds).toContainEqual([imageText, '2', String(imageNano)]);
    expect(kinds).toContainEqual(['Batch lines \u2014 2 at the batch price', '2', String(batchNano)]);

    const pdf = await page.request.get(`${gw.url}/dashboard/billing/statements/${month}.pdf?account=acme`);
    expect(pdf.status()).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'units-statement-'));
    writeFileSync(join(dir, 's.pdf'), await pdf.body());
    const { stdout } = await run('pdftotext', ['-layout', join(dir, 's.pdf'), '-']);
    expect(stdout).toContain('Quantities by kind of call');
    expect(stdout).toMatch(/Transcriptions \u2014 1 second of audio\s+0\.00/);
    expect(stdout).toMatch(/Speech \u2014 12 characters\s+0\.00/);
    expect(stdout).toMatch(new RegExp(`${imageText}\\s+\\d+\\.\\d\\d`));
    expect(stdout).toMatch(/Batch lines \u2014 2 at the batch price\s+\d+\.\d\d/);
  }, 180_000);
});
