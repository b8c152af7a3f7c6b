// A Message Batch whose results arrive after the gateway that created it is gone is charged once, by another process
// on the same Redis: the first process submits it to the Anthropic upstream (a loopback fake of its batch API, which
// holds the batch running) and stops; a second one polls it to the end and charges every request. A third pass over
// the same results (a process that died after charging the requests and before it marked the batch done) charges
// nothing more. Real Redis.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../gateway/contract/compile.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import { RedisBatchRecords } from '../../gateway/batches/redis-records.ts';
import { build } from '../../gateway/server.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { startAnthropicBatchUpstream, type FakeAnthropicBatches } from '../fakes/anthropic-batch-upstream.ts';
import { TEST_PEPPER } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

const UPSTREAM_KEY = 'sk-ant-restart-test';
let redis: TestRedis;
let fake: FakeAnthropicBatches;
const b = basics();
let docs: object[];

interface Gw {
  url: string;
  store: RedisStore;
  records: RedisBatchRecords;
  tick(): Promise<void>;
  close(): Promise<void>;
}

async function gateway(job: boolean): Promise<Gw> {
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `test#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  const result = compile(parsed.set, { pepper: TEST_PEPPER });
  const store = await RedisStore.connect({ url: redis.url, prefix: redis.prefix });
  await store.applyConfig(result.snapshot, result.keys);
  const records = new RedisBatchRecords(store.redis, redis.prefix);
  const g = await build({
    config: { current: () => result.snapshot },
    store,
    pepper: TEST_PEPPER,
    logLevel: 'silent',
    batches: { records, job, settings: { pollMs: 100 } },
  });
  const url = await g.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    store,
    records,
    tick: () => g.batches.tick(),
    close: async () => {
      await g.app.close();
      await store.close();
    },
  };
}

beforeAll(async () => {
  redis = await startRedis('anthropic-batches-restart');
  fake = await startAnthropicBatchUpstream(UPSTREAM_KEY);
  docs = [
    ...b.docs,
    secret('anthropic-upstream', { key: UPSTREAM_KEY }),
    route('claude-batch', [
      {
        name: 'anthropic-a',
        provider: 'anthropic',
        baseUrl: fake.baseUrl,
        upstreamModel: 'claude-up-1',
        credentials: { secretKeyRef: { name: 'anthropic-upstream', key: 'key' } },
      },
    ]),
  ];
});

afterAll(async () => {
  await fake?.close();
  await redis?.stop();
});

describe('a Message Batch settled after a restart', () => {
  it('is charged once, request by request, by the process that finds its results', async () => {
    fake.mode.stuck = true;
    const first = await gateway(true);
    const client = new Anthropic({ baseURL: `${first.url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
    const requests = ['one', 'two', 'three'].map((w, i) => ({
      custom_id: `r${i}`,
      params: { model: 'claude-batch', max_tokens: 8, messages: [{ role: 'user' as const, content: w }] },
    }));
    const before = await first.store.ledger('acme');
    const batch = await client.messages.batches.create({ requests });
    await until(async () => [...fake.created.values()].some((rs) => rs.some((r) => r.custom_id === 'r0')), 10_000, 'submitted');
    const held = (await first.store.ledger('acme')).heldNano - before.heldNano;
    expect(held).toBeGreaterThan(0);
    await first.close();

    fake.mode.stuck = false;
    const second = await gateway(true);
    const again = new Anthropic({ baseURL: `${second.url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
    await until(async () => (await again.messages.batches.retrieve(batch.id)).processing_status === 'ended', 15_000, 'ended');
    expect((await again.messages.batches.retrieve(batch.id)).request_counts.succeeded).toBe(3);
    const events = (await second.store.usageEvents('acme')).filter((e) => e.requestedModel === 'claude-batch');
    expect(events).toHaveLength(3);
    const cost = events.reduce((n, e) => n + e.costNano, 0);
    expect(cost).toBe(3 * Math.floor((fake.usage.input_tokens * 1040 + fake.usage.output_tokens * 2080) / 2));
    const after = await second.store.ledger('acme');
    expect(after.spentNano - before.spentNano).toBe(cost);
    expect(after.heldNano).toBe(before.heldNano);
    await second.close();

    // A process that charged the requests and died before it marked the batch done: the next one goes over it again.
    const third = await gateway(false);
    const rec = await third.records.batch('acme', batch.id);
    if (!rec) throw new Error('the batch record is gone');
    await third.records.putBatch({ ...rec, settled: false, status: 'in_progress' });
    await third.tick();
    expect((await third.records.batch('acme', batch.id))?.settled).toBe(true);
    expect((await third.store.usageEvents('acme')).filter((e) => e.requestedModel === 'claude-batch')).toHaveLength(3);
    const last = await third.store.ledger('acme');
    expect(last.spentNano).toBe(after.spentNano);
    expect(last.heldNano).toBe(after.heldNano);
    await third.close();
  }, 60_000);
});
