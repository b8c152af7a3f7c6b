// Files and batches kept in Postgres (DATABASE_URL), driven by the official openai SDK on real Postgres and Redis
// (money, claims): a batch created on one gateway is finished by another after a restart, its output read back;
// files are sealed at rest and chunked; another account's file and batch ids are not found (404, nothing told);
// files past their retention are deleted by the job's sweep (the clock stepped past it, no waiting).
import OpenAI, { NotFoundError, toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../gateway/contract/compile.ts';
import { keyFromPepper, Keyring } from '../../gateway/contract/sealed-credentials.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import { CHUNK_BYTES, PostgresBatchRecords } from '../../gateway/batches/postgres-records.ts';
import { RedisBatchRecords } from '../../gateway/batches/redis-records.ts';
import type { BatchJob } from '../../gateway/batches/job.ts';
import { build } from '../../gateway/server.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { TEST_PEPPER } from '../helpers/gateway.ts';
import { account, apiKey, basics, route } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

let redis: TestRedis;
let pg: TestPostgres;
const b = basics();
const rival = apiKey('rival-key', 'rival');
const docs = [
  ...b.docs,
  account('rival', 'builder', { credits: [{ id: 'r1', amountUsd: 5 }] }),
  ...rival.docs,
  route('mock-chat', [{ name: 'mock-a', provider: 'mock' }]),
];
const RETENTION_DAYS = 2;

interface Gw {
  url: string;
  store: RedisStore;
  records: PostgresBatchRecords;
  job: BatchJob;
  close(): Promise<void>;
}

async function gateway(opts: { job: boolean; now?: () => number }): Promise<Gw> {
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `test#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  const result = compile(parsed.set, { pepper: TEST_PEPPER });
  const store = await RedisStore.connect({ url: redis.url, prefix: redis.prefix });
  await store.applyConfig(result.snapshot, result.keys);
  const ring = new Keyring([keyFromPepper(TEST_PEPPER)]);
  const records = await PostgresBatchRecords.open(pg.url, ring, new RedisBatchRecords(store.redis, redis.prefix));
  const { app, batches } = await build({
    config: { current: () => result.snapshot },
    store,
    pepper: TEST_PEPPER,
    logLevel: 'silent',
    ...(opts.now ? { now: opts.now } : {}),
    batches: { records, job: opts.job, settings: { pollMs: 100, fileRetentionSec: RETENTION_DAYS * 86_400 } },
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    store,
    records,
    job: batches,
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}

const sdk = (url: string, key: string): OpenAI => new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });

function line(id: string, content: string): string {
  return JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'mock-chat', messages: [{ role: 'user', content }], max_tokens: 8 },
  });
}

beforeAll(async () => {
  [redis, pg] = await Promise.all([startRedis('batches-postgres'), startPostgres('batches-postgres')]);
}, 120_000);

afterAll(async () => {
  await redis?.stop();
  await pg?.stop();
});

describe('files and batches in Postgres', () => {
  let fileId = '';
  let batchId = '';
  let outputId = '';

  it('outlive the gateway: a batch made on one is finished by the next, its output read back', async () => {
    const first = await gateway({ job: true });
    const client = sdk(first.url, b.keys.builder);
    const text = ['one', 'two', 'three'].map((w, i) => line(`r${i}`, `secret-word-${w}`)).join('\n');
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
    fileId = file.id;
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    batchId = batch.id;
    await until(async () => (await client.batches.retrieve(batch.id)).status === 'in_progress', 10_000, 'submitted');
    await first.close();
    // Nothing of the file or the batch is in Redis: only the claims (gone by now) were.
    expect(await redisKeysNaming(batch.id, file.id)).toEqual([]);

    const second = await gateway({ job: true });
    const again = sdk(second.url, b.keys.builder);
    await until(async () => (await again.batches.retrieve(batch.id)).status === 'completed', 20_000, 'completed');
    const done = await again.batches.retrieve(batch.id);
    expect(done.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    outputId = done.output_file_id ?? '';
    const output = await (await again.files.content(outputId)).text();
    expect(
      output
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { custom_id: string }).custom_id)
        .sort(),
    ).toEqual(['r0', 'r1', 'r2']);
    expect(await (await again.files.content(file.id)).text()).toBe(text);
    const listed = (await again.files.list()).data.map((f) => f.id);
    expect(listed).toEqual(expect.arrayContaining([file.id, outputId]));
    expect((await again.batches.list()).data.map((x) => x.id)).toContain(batch.id);
    const events = (await second.store.usageEvents('acme')).filter((e) => e.requestedModel === 'mock-chat');
    expect(events).toHaveLength(3);
    await second.close();
  }, 90_000);

  it('keeps no line of a file in clear, in chunks of at most 1 MiB', async () => {
    const { rows } = await pg.pool.query<{ sealed: Buffer }>('SELECT sealed FROM batch_file_chunks WHERE account = $1 AND file_id = $2', ['acme', fileId]);
    expect(rows).toHaveLength(1);
    const raw = rows[0]?.sealed.toString('latin1') ?? '';
    expect(raw).not.toContain('secret-word');
    expect(raw).not.toContain('custom_id');

    const gw = await gateway({ job: false });
    const client = sdk(gw.url, b.keys.builder);
    const big = Array.from({ length: 2600 }, (_, i) => line(`big${i}`, `${i} ${'x'.repeat(1000)}`)).join('\n');
    const file = await client.files.create({ file: await toFile(Buffer.from(big), 'big.jsonl'), purpose: 'batch' });
    const chunks = await pg.pool.query<{ n: number; max: number }>(
      'SELECT count(*)::int AS n, max(length(sealed))::int AS max FROM batch_file_chunks WHERE account = $1 AND file_id = $2',
      ['acme', file.id],
    );
    expect(chunks.rows[0]?.n).toBe(Math.ceil(Buffer.byteLength(big) / CHUNK_BYTES));
    expect(chunks.rows[0]?.max).toBeLessThanOrEqual(CHUNK_BYTES + 32);
    expect(await (await client.files.content(file.id)).text()).toBe(big);
    await client.files.delete(file.id);
    expect((await pg.pool.query('SELECT 1 FROM batch_file_chunks WHERE file_id = $1', [file.id])).rowCount).toBe(0);
    await gw.close();

    // Read with another key (a changed pepper, the old key rotated out): not found, never a 500 or a cut stream.
    const stranger = await PostgresBatchRecords.open(
      pg.url,
      new Keyring([keyFromPepper('another-pepper')]),
      new RedisBatchRecords(gw.store.redis, redis.prefix),
    );
    try {
      expect(await stranger.content('acme', fileId, Date.now())).toBeNull();
      expect(await stranger.contentStream('acme', fileId, Date.now())).toBeNull();
    } finally {
      await stranger.close();
    }
  }, 60_000);

  it("answers 404 to another account's file and batch ids, telling nothing", async () => {
    const gw = await gateway({ job: false });
    const other = sdk(gw.url, rival.key);
    const refusals: Array<[string, () => Promise<unknown>]> = [
      ['file', () => other.files.retrieve(fileId)],
      ['content', () => other.files.content(outputId)],
      ['delete', () => other.files.delete(fileId)],
      ['batch', () => other.batches.retrieve(batchId)],
      ['cancel', () => other.batches.cancel(batchId)],
      ['create on the file', () => other.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' })],
    ];
    for (const [what, call] of refusals) {
      const err = await call().then(
        () => new Error(`${what}: answered`),
        (e: unknown) => e,
      );
      expect(err, what).toBeInstanceOf(NotFoundError);
      const e = err as NotFoundError;
      expect(e.status).toBe(404);
      expect((e.error as { type?: string }).type, what).toBe('invalid_request_error');
      // Only the id the caller gave: no account, filename, model or status of the owner's.
      expect(e.message, what).not.toMatch(/acme|in\.jsonl|mock-chat|completed/);
    }
    expect((await other.files.list()).data).toEqual([]);
    expect((await other.batches.list()).data).toEqual([]);
    // Still the owner's, untouched.
    const owner = sdk(gw.url, b.keys.builder);
    expect((await owner.files.retrieve(fileId)).id).toBe(fileId);
    expect((await owner.batches.retrieve(batchId)).status).toBe('completed');
    await gw.close();
  }, 60_000);

  it('deletes the files past their retention in the sweep, and keeps the others', async () => {
    let now = Date.now();
    const gw = await gateway({ job: false, now: () => now });
    const client = sdk(gw.url, b.keys.builder);
    const old = await client.files.create({ file: await toFile(Buffer.from(line('a', 'old')), 'old.jsonl'), purpose: 'batch' });
    expect(old.expires_at).toBe(old.created_at + RETENTION_DAYS * 86_400);
    now += (RETENTION_DAYS * 86_400 - 60) * 1000;
    const young = await client.files.create({ file: await toFile(Buffer.from(line('b', 'young')), 'young.jsonl'), purpose: 'batch' });
    now += 120_000; // the first file's retention is over, the second's not
    await expect(client.files.retrieve(old.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await rowsOf(old.id)).toEqual({ files: 1, chunks: 1 });
    await gw.job.tick();
    expect(await rowsOf(old.id)).toEqual({ files: 0, chunks: 0 });
    expect(await rowsOf(young.id)).toEqual({ files: 1, chunks: 1 });
    expect((await client.files.retrieve(young.id)).id).toBe(young.id);
    // The earlier tests' files (made with the real clock) are past their retention too by now.
    expect(await rowsOf(fileId)).toEqual({ files: 0, chunks: 0 });
    await gw.close();
  }, 60_000);

  it('answers 503 with retry-after while Postgres is away, holds nothing, and serves again once it is back', async () => {
    const gw = await gateway({ job: false });
    const client = sdk(gw.url, b.keys.builder);
    const file = await client.files.create({ file: await toFile(Buffer.from(line('p', 'before')), 'p.jsonl'), purpose: 'batch' });
    const before = await gw.store.ledger('acme');
    await pg.stopServer();
    try {
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['upload', async () => client.files.create({ file: await toFile(Buffer.from(line('q', 'during')), 'q.jsonl'), purpose: 'batch' })],
        ['file', () => client.files.retrieve(file.id)],
        ['content', () => client.files.content(file.id)],
        ['list', () => client.files.list()],
        ['create', () => client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })],
        ['batches', () => client.batches.list()],
      ];
      for (const [what, call] of calls) {
        const err = await call().then(
          () => new Error(`${what}: answered`),
          (e: unknown) => e,
        );
        expect(err, what).toBeInstanceOf(OpenAI.APIError);
        const e = err as InstanceType<typeof OpenAI.APIError>;
        expect(e.status, what).toBe(503);
        expect(e.code, what).toBe('store_unavailable');
        expect(e.headers?.get('retry-after'), what).toBe('1');
      }
      expect((await gw.store.ledger('acme')).heldNano).toBe(before.heldNano);
    } finally {
      await pg.startServer();
    }
    await until(
      async () =>
        await client.files.retrieve(file.id).then(
          () => true,
          () => false,
        ),
      20_000,
      'Postgres back',
    );
    expect(await (await client.files.content(file.id)).text()).toBe(line('p', 'before'));
    await gw.close();
  }, 90_000);
});

async function rowsOf(id: string): Promise<{ files: number; chunks: number }> {
  const f = await pg.pool.query('SELECT 1 FROM batch_files WHERE id = $1', [id]);
  const c = await pg.pool.query('SELECT 1 FROM batch_file_chunks WHERE file_id = $1', [id]);
  return { files: f.rowCount ?? 0, chunks: c.rowCount ?? 0 };
}

async function redisKeysNaming(...ids: string[]): Promise<string[]> {
  const store = await RedisStore.connect({ url: redis.url, prefix: redis.prefix });
  try {
    const keys = await store.redis.keys('*');
    const out: string[] = [];
    for (const k of keys) {
      const type = await store.redis.type(k);
      const text = type === 'hash' ? JSON.stringify(await store.redis.hgetall(k)) : type === 'string' ? ((await store.redis.get(k)) ?? '') : '';
      if (ids.some((id) => k.includes(id) || text.includes(id))) out.push(k);
    }
    return out;
  } finally {
    await store.close();
  }
}
