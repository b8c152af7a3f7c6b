// Stored Responses in Postgres (DATABASE_URL): one contract run against the memory store and the Postgres one
// (account isolation, expiry, delete, bytes), then gateways on a real Postgres: the conversation is sealed at rest
// (no input or answer text in any column), a second gateway on the same database reads and continues what the first
// stored, and expiry applies there too.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keyring } from '../../gateway/contract/sealed-credentials.ts';
import { MemoryResponseStore } from '../../gateway/stored-responses/memory.ts';
import { PostgresResponseStore } from '../../gateway/stored-responses/postgres.ts';
import { recordBytes, type ResponseStore, type StoredResponse } from '../../gateway/stored-responses/types.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startStoredEnv, type StoredEnv } from './stored-setup.ts';

let pg: TestPostgres;
const ring = new Keyring([Buffer.alloc(32, 7)]);

beforeAll(async () => {
  pg = await startPostgres('stored_responses');
}, 120_000);

afterAll(async () => {
  await pg?.stop();
});

const T0 = 1_800_000_000_000;

function record(account: string, id: string, text: string, expiresAt = T0 + 1000): StoredResponse {
  return {
    id,
    account,
    previousId: null,
    createdAt: T0,
    expiresAt,
    input: [{ id: `msg_${id}`, type: 'message', role: 'user', content: [{ type: 'input_text', text }] }],
    response: { id, object: 'response', status: 'completed', output: [] },
  };
}

describe.each([
  ['memory', async (): Promise<ResponseStore> => new MemoryResponseStore()],
  ['postgres', async (): Promise<ResponseStore> => PostgresResponseStore.open(pg.url, ring)],
])('response store contract: %s', (_name, open) => {
  it('keeps records per account, with expiry, delete and bytes', async () => {
    const store = await open();
    const a = `acct-${Math.random().toString(36).slice(2)}`;
    const r1 = record(a, `resp_${a}_1`, 'one');
    const r2 = record(a, `resp_${a}_2`, 'two', T0 + 10);
    await store.put(r1, T0);
    await store.put(r2, T0);
    expect(await store.get(a, r1.id, T0)).toEqual(r1);
    expect(await store.get('someone-else', r1.id, T0)).toBeNull();
    expect(await store.delete('someone-else', r1.id, T0)).toBe(false);
    expect(await store.usedBytes(a, T0)).toBe(recordBytes(r1) + recordBytes(r2));
    // Past its expiry: not read, not counted.
    expect(await store.get(a, r2.id, T0 + 10)).toBeNull();
    expect(await store.usedBytes(a, T0 + 10)).toBe(recordBytes(r1));
    expect(await store.delete(a, r1.id, T0)).toBe(true);
    expect(await store.get(a, r1.id, T0)).toBeNull();
    expect(await store.delete(a, r1.id, T0)).toBe(false);
    await store.close();
  });
});

describe('the Postgres chain read (one round trip)', () => {
  it('follows previous_id within the account and its live rows, newest first, up to the byte bound', async () => {
    const store = await PostgresResponseStore.open(pg.url, ring);
    const a = `acct-${Math.random().toString(36).slice(2)}`;
    const r1 = record(a, `resp_${a}_c1`, 'one');
    const r2 = { ...record(a, `resp_${a}_c2`, 'two'), previousId: r1.id };
    const r3 = { ...record(a, `resp_${a}_c3`, 'three'), previousId: r2.id };
    for (const r of [r1, r2, r3]) await store.put(r, T0);
    expect(await store.chain(a, r3.id, T0, 1e9)).toEqual([r3, r2, r1]);
    // Stops once the bytes read pass the bound (the caller then refuses the call).
    expect((await store.chain(a, r3.id, T0, recordBytes(r3))).map((r) => r.id)).toEqual([r3.id, r2.id]);
    expect(await store.chain('someone-else', r3.id, T0, 1e9)).toEqual([]);
    await store.delete(a, r2.id, T0);
    expect(await store.chain(a, r3.id, T0, 1e9)).toEqual([r3]);
    await store.close();
  });
});

describe('gateways on Postgres', () => {
  let one: StoredEnv;
  let two: StoredEnv;

  beforeAll(async () => {
    one = await startStoredEnv({ store: await PostgresResponseStore.open(pg.url, ring) });
    two = await startStoredEnv({ store: await PostgresResponseStore.open(pg.url, ring) });
    two.clock.now = one.clock.now;
  });

  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it('seals the conversation at rest; another gateway on the database reads and continues it; expiry applies', async () => {
    const c1 = new OpenAI({ baseURL: `${one.gw.url}/v1`, apiKey: one.keys.builder, maxRetries: 0 });
    const c2 = new OpenAI({ baseURL: `${two.gw.url}/v1`, apiKey: two.keys.builder, maxRetries: 0 });
    const first = await c1.responses.create({ model: 'claude-test', input: 'The password hint is periwinkle.' });
    const streamed = await c1.responses.stream({ model: 'gpt-chat', input: 'Streamed zanzibar turn' }).finalResponse();
    // Read right after the answer by the same gateway, and by the other one.
    expect((await c1.responses.retrieve(first.id)).output_text).toBe(first.output_text);
    expect(await c2.responses.retrieve(first.id)).toEqual(first);
    expect((await c2.responses.retrieve(streamed.id)).id).toBe(streamed.id);
    const next = await c2.responses.create({ model: 'claude-test', input: 'And the hint?', previous_response_id: first.id });
    expect(JSON.stringify(two.anthropic.calls.at(-1)?.body)).toContain('periwinkle');
    expect((await c1.responses.inputItems.list(next.id)).data).toHaveLength(3);
    const third = await c1.responses.create({ model: 'gpt-chat', input: 'Third turn', previous_response_id: next.id });
    expect(JSON.stringify(one.openai.calls.at(-1)?.body)).toContain('periwinkle');
    expect((await c2.responses.inputItems.list(third.id)).data).toHaveLength(5);
    // Nothing of the conversation in clear in the table.
    const { rows } = await pg.pool.query('SELECT * FROM stored_responses');
    const dump = JSON.stringify(rows);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const secret of ['periwinkle', 'zanzibar', 'And the hint', first.output_text]) expect(dump).not.toContain(secret);
    // Deleted on one gateway, gone on the other.
    await c2.responses.delete(streamed.id);
    await expect(c1.responses.retrieve(streamed.id)).rejects.toMatchObject({ status: 404 });
    // 30 days later: expired everywhere.
    one.clock.now += 30 * 86_400_000 + 1;
    two.clock.now = one.clock.now;
    await expect(c1.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(c2.responses.create({ model: 'claude-test', input: 'x', previous_response_id: next.id })).rejects.toMatchObject({ status: 400 });
  });
});

describe('Postgres down', () => {
  it('answers 503 store_unavailable with retry-after (never a 5xx of its own), charging nothing; store: false still works', async () => {
    const store = await PostgresResponseStore.open(pg.url, ring);
    const env = await startStoredEnv({ store });
    try {
      const c = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: env.keys.builder, maxRetries: 0 });
      const first = await c.responses.create({ model: 'gpt-chat', input: 'Before the outage' });
      await pg.stopServer();
      try {
        const spent = env.gw.sink.events.reduce((s, e) => s + e.costNano, 0);
        const calls = env.openai.calls.length;
        for (const p of [c.responses.retrieve(first.id), c.responses.create({ model: 'gpt-chat', input: 'x', previous_response_id: first.id })]) {
          const err = (await p.catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
          expect(err.status).toBe(503);
          expect((err.error as { code?: string }).code).toBe('store_unavailable');
          expect(err.headers?.get('retry-after')).toBe('1');
        }
        expect(env.openai.calls.length).toBe(calls);
        expect(env.gw.sink.events.reduce((s, e) => s + e.costNano, 0)).toBe(spent);
        expect((await c.responses.create({ model: 'gpt-chat', input: 'y', store: false })).status).toBe('completed');
      } finally {
        await pg.startServer();
      }
      expect((await c.responses.retrieve(first.id)).id).toBe(first.id);
    } finally {
      await env.close();
    }
  }, 120_000);
});
