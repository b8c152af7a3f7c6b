// A batch past its completion window is ended by the gateway, whatever the upstream does: one never submitted
// expires at once; one running is cancelled upstream at the window's end (what ran is charged, the rest expired);
// one whose upstream still has not ended when half the hold's grace is gone expires with nothing more charged, so
// no result is ever charged after its hold ran out. Each time the rest of the hold is released. The gateway's clock
// is the test's; the job is stepped by hand. OpenAI's dialect on the mock, Anthropic's on a fake of its batch API.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BATCH_SETTINGS } from '../../gateway/batches/settings.ts';
import { compile } from '../../gateway/contract/compile.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import { build } from '../../gateway/server.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { startAnthropicBatchUpstream, type FakeAnthropicBatches } from '../fakes/anthropic-batch-upstream.ts';
import { TEST_PEPPER } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';

const UPSTREAM_KEY = 'sk-ant-expiry-test';
const WINDOW = DEFAULT_BATCH_SETTINGS.windowMs;
const GRACE = DEFAULT_BATCH_SETTINGS.holdGraceMs;

let fake: FakeAnthropicBatches;
let store: MemoryStore;
let sink: MemoryUsageSink;
let close: () => Promise<void>;
let tick: () => Promise<void>;
let openai: OpenAI;
let anthropic: Anthropic;
let clock = Date.now();

beforeAll(async () => {
  fake = await startAnthropicBatchUpstream(UPSTREAM_KEY);
  const b = basics();
  const docs = [
    ...b.docs,
    secret('anthropic-upstream', { key: UPSTREAM_KEY }),
    route('mock-chat', [{ name: 'mock-a', provider: 'mock' }]),
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
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `test#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  const result = compile(parsed.set, { pepper: TEST_PEPPER });
  sink = new MemoryUsageSink();
  store = new MemoryStore(sink, { now: () => clock });
  await store.applyConfig(result.snapshot, result.keys);
  const g = await build({
    config: { current: () => result.snapshot },
    store,
    pepper: TEST_PEPPER,
    logLevel: 'silent',
    now: () => clock,
    batches: { job: false },
  });
  const url = await g.app.listen({ port: 0, host: '127.0.0.1' });
  tick = () => g.batches.tick();
  close = () => g.app.close();
  openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await close?.();
  await fake?.close();
});

const chatLine = (id: string): string =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'mock-chat', messages: [{ role: 'user', content: id }], max_tokens: 8 },
  });

const messageReq = (id: string): { custom_id: string; params: Anthropic.Messages.MessageCreateParamsNonStreaming } => ({
  custom_id: id,
  params: { model: 'claude-batch', max_tokens: 8, messages: [{ role: 'user', content: id }] },
});

describe('a batch past its completion window', () => {
  it('never submitted: expires at once, every line expired, nothing charged, the hold released', async () => {
    const before = await store.ledger('acme');
    const file = await openai.files.create({ file: await toFile(Buffer.from(`${chatLine('a')}\n${chatLine('b')}\n`), 'in.jsonl'), purpose: 'batch' });
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect((await store.ledger('acme')).heldNano).toBeGreaterThan(before.heldNano);
    if (batch.expires_at === undefined) throw new Error('the batch has no expires_at');
    clock = batch.expires_at * 1000 + 1000;
    await tick();
    const done = await openai.batches.retrieve(batch.id);
    expect(done.status).toBe('expired');
    expect(done.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
    const errors = (await (await openai.files.content(done.error_file_id as string)).text()).trim().split('\n');
    expect(errors.map((l) => (JSON.parse(l) as { error: { code: string } }).error.code)).toEqual(['batch_expired', 'batch_expired']);
    const after = await store.ledger('acme');
    expect(after.spentNano).toBe(before.spentNano);
    expect(after.heldNano).toBe(before.heldNano);
  });

  it('running upstream: cancelled there at the window, its unrun requests expired and free', async () => {
    fake.mode.stuck = true;
    const before = await store.ledger('acme');
    const batch = await anthropic.messages.batches.create({ requests: [messageReq('e-1'), messageReq('e-2')] });
    await tick();
    expect([...fake.created.values()].some((rs) => rs.some((r) => r.custom_id === 'e-1'))).toBe(true);
    clock = Date.parse(batch.expires_at) + 1000;
    fake.mode.stuck = false;
    await tick();
    expect(fake.cancels).toHaveLength(1);
    const done = await anthropic.messages.batches.retrieve(batch.id);
    expect(done.processing_status).toBe('ended');
    expect(done.request_counts).toEqual({ processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 2 });
    const rows: unknown[] = [];
    for await (const r of await anthropic.messages.batches.results(batch.id)) rows.push(r);
    expect(rows).toEqual([
      { custom_id: 'e-1', result: { type: 'expired' } },
      { custom_id: 'e-2', result: { type: 'expired' } },
    ]);
    const after = await store.ledger('acme');
    expect(after.spentNano).toBe(before.spentNano);
    expect(after.heldNano).toBe(before.heldNano);
  });

  it('whose upstream never ends: expired before its hold runs out; results that come later charge nothing', async () => {
    fake.mode.stuck = true;
    try {
      const start = clock;
      const before = await store.ledger('acme');
      const batch = await anthropic.messages.batches.create({ requests: [messageReq('late-1')] });
      await tick();
      const expires = Date.parse(batch.expires_at);
      expect(expires).toBe(start + WINDOW);
      clock = expires + 1000;
      await tick();
      expect((await anthropic.messages.batches.retrieve(batch.id)).processing_status).toBe('canceling');
      // Still running upstream just before half the grace: the batch waits for it.
      clock = expires + GRACE / 2 - 1;
      await tick();
      expect((await anthropic.messages.batches.retrieve(batch.id)).processing_status).toBe('canceling');
      clock = expires + GRACE / 2;
      await tick();
      const done = await anthropic.messages.batches.retrieve(batch.id);
      expect(done.processing_status).toBe('ended');
      expect(done.request_counts.expired).toBe(1);
      const mid = await store.ledger('acme');
      expect(mid.heldNano).toBe(before.heldNano);
      expect(mid.spentNano).toBe(before.spentNano);
      // The upstream answers at last: the batch is done, nothing is charged for it.
      fake.mode.stuck = false;
      clock = expires + GRACE * 2;
      await tick();
      const after = await store.ledger('acme');
      expect(after.spentNano).toBe(before.spentNano);
      expect(sink.events.filter((e) => e.requestedModel === 'claude-batch' && e.costNano > 0)).toHaveLength(0);
    } finally {
      fake.mode.stuck = false;
    }
  });
});
