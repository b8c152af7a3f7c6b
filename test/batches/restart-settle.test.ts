// A batch whose results arrive after the gateway that created it is gone is charged once, by another process on the
// same Redis: the first process submits the batch and stops; a second one (a new store, a new job) polls it to the
// end and charges every line. A third pass over the same results (a process that died after charging the lines and
// before it marked the batch done) charges nothing more. Real Redis; the mock's batch API.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../gateway/contract/compile.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import { RedisBatchRecords } from '../../gateway/batches/redis-records.ts';
import { build } from '../../gateway/server.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { TEST_PEPPER } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

let redis: TestRedis;
const b = basics();
const docs = [...b.docs, route('mock-chat', [{ name: 'mock-a', provider: 'mock' }])];

async function gateway(job: boolean): Promise<{ url: string; store: RedisStore; records: RedisBatchRecords; close(): Promise<void> }> {
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `test#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  const result = compile(parsed.set, { pepper: TEST_PEPPER });
  const store = await RedisStore.connect({ url: redis.url, prefix: redis.prefix });
  await store.applyConfig(result.snapshot, result.keys);
  const records = new RedisBatchRecords(store.redis, redis.prefix);
  const { app } = await build({
    config: { current: () => result.snapshot },
    store,
    pepper: TEST_PEPPER,
    logLevel: 'silent',
    batches: { records, job, settings: { pollMs: 100 } },
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    store,
    records,
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}

beforeAll(async () => {
  redis = await startRedis('batches-restart');
});

afterAll(async () => {
  await redis?.stop();
});

describe('a batch settled after a restart', () => {
  it('is charged once, line by line, by the process that finds its results', async () => {
    const first = await gateway(true);
    const client = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
    const lines = ['one', 'two', 'three'].map((w, i) =>
      JSON.stringify({
        custom_id: `r${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'mock-chat', messages: [{ role: 'user', content: w }], max_tokens: 8 },
      }),
    );
    const file = await client.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'), purpose: 'batch' });
    const before = await first.store.ledger('acme');
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await until(async () => (await client.batches.retrieve(batch.id)).status === 'in_progress', 5000, 'submitted');
    const held = (await first.store.ledger('acme')).heldNano - before.heldNano;
    expect(held).toBeGreaterThan(0);
    await first.close();

    const second = await gateway(true);
    const again = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
    await until(async () => (await again.batches.retrieve(batch.id)).status === 'completed', 15_000, 'completed');
    const events = (await second.store.usageEvents('acme')).filter((e) => e.requestedModel === 'mock-chat');
    expect(events).toHaveLength(3);
    const cost = events.reduce((n, e) => n + e.costNano, 0);
    expect(cost).toBeGreaterThan(0);
    const after = await second.store.ledger('acme');
    expect(after.spentNano - before.spentNano).toBe(cost);
    expect(after.heldNano).toBe(before.heldNano);
    await second.close();

    // A process that charged the lines and died before it marked the batch done: the next one goes over it again.
    const third = await gateway(false);
    const rec = await third.records.batch('acme', batch.id);
    if (!rec) throw new Error('the batch record is gone');
    await third.records.putBatch({ ...rec, settled: false, status: 'in_progress' });
    const { app } = await build({
      config: { current: () => compile(parseManifests(docs.map((doc, i) => ({ source: `t#${i}`, doc }))).set, { pepper: TEST_PEPPER }).snapshot },
      store: third.store,
      pepper: TEST_PEPPER,
      logLevel: 'silent',
      batches: { records: third.records, job: false },
    }).then(async (g) => {
      await g.batches.tick();
      return g;
    });
    await app.close();
    expect((await third.records.batch('acme', batch.id))?.settled).toBe(true);
    expect((await third.store.usageEvents('acme')).filter((e) => e.requestedModel === 'mock-chat')).toHaveLength(3);
    const last = await third.store.ledger('acme');
    expect(last.spentNano).toBe(after.spentNano);
    expect(last.heldNano).toBe(after.heldNano);
    await third.close();
  }, 60_000);
});
