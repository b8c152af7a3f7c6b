// Issue 18, item 4 / TESTING.md reliability case 10: a storm of streamed calls whose clients go away at random
// moments (during authentication and admission too). 5 s later nothing may be left: no upstream request open, no
// hold, and no call billed as if its stream had been delivered. On the memory store and on Redis, and with a slow
// store (admission 200 ms, the client gone at 100 ms).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { prng, sleep, startAbuseGateway, within, type AbuseGateway } from './harness.ts';
import { abuseConfig, ACCOUNT } from './manifests.ts';
import { requestBytes } from './raw-http.ts';

const SEED = 18;
/** The upstream streams 80 chunks, one every 100 ms: 8 s, longer than the storm and the 5 s wait together. */
const SLOW_STREAM = { kind: 'reply' as const, content: 'word '.repeat(80).trim(), chunkDelayMs: 100 };
const AFTER_MS = 5000;

let redis: TestRedis;

beforeAll(async () => {
  redis = await startRedis('abuse-storm');
});

afterAll(async () => {
  await redis?.stop();
});

interface Variant {
  name: string;
  store: 'memory' | 'redis';
  calls: number;
  admitDelayMs: number;
  /** When each client goes away, ms after it sent its request. */
  abortAt: (i: number, r: ReturnType<typeof prng>) => number;
}

const VARIANTS: Variant[] = [
  { name: '300 streams aborted at 0-300 ms, memory store', store: 'memory', calls: 300, admitDelayMs: 0, abortAt: (_i, r) => r.int(301) },
  { name: '300 streams aborted at 0-300 ms, Redis', store: 'redis', calls: 300, admitDelayMs: 0, abortAt: (_i, r) => r.int(301) },
  { name: '60 streams aborted at 100 ms while admission takes 200 ms, memory store', store: 'memory', calls: 60, admitDelayMs: 200, abortAt: () => 100 },
  { name: '60 streams aborted at 100 ms while admission takes 200 ms, Redis', store: 'redis', calls: 60, admitDelayMs: 200, abortAt: () => 100 },
];

/** Sends one streamed call and drops the connection `afterMs` later, whatever has arrived by then. */
function abortedCall(port: number, bytes: Buffer, afterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.on('error', () => {});
    s.on('data', () => {});
    s.once('connect', () => s.write(bytes));
    setTimeout(() => {
      s.destroy();
      resolve();
    }, afterMs);
  });
}

describe.each(VARIANTS)('disconnect storm: $name', (v) => {
  let openai: FakeUpstream;
  let anthropic: FakeAnthropic;
  let gw: AbuseGateway;
  let key: string;

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startFakeUpstream('storm-openai'), startFakeAnthropic('storm-anthropic')]);
    openai.fallback = () => SLOW_STREAM;
    anthropic.fallback = () => ({ kind: 'reply', text: 'word '.repeat(80).trim(), chunkDelayMs: 100 });
    const cfg = abuseConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
    key = cfg.key;
    const r = v.store === 'redis' ? { ...redis, prefix: `${redis.prefix}-${v.admitDelayMs}` } : undefined;
    gw = await startAbuseGateway(cfg.docs, { redis: r, admitDelayMs: v.admitDelayMs });
  });

  afterAll(async () => {
    await gw?.close();
    await Promise.all([openai?.close(), anthropic?.close()]);
  });

  it('leaves no upstream request open, no hold, and bills no stream in full', async () => {
    const r = prng(SEED);
    const calls = Array.from({ length: v.calls }, (_, i) => {
      const anthropicSide = i % 3 === 2;
      const path = anthropicSide ? '/anthropic/v1/messages' : '/v1/chat/completions';
      const model = i % 2 === 0 ? 'chat-o' : 'chat-a';
      const body = JSON.stringify(
        anthropicSide
          ? { model, max_tokens: 200, stream: true, messages: [{ role: 'user', content: `storm ${i}` }] }
          : { model, max_tokens: 200, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: `storm ${i}` }] },
      );
      const bytes = requestBytes(
        'POST',
        path,
        [
          ['authorization', `Bearer ${key}`],
          ['content-type', 'application/json'],
          ['content-length', String(Buffer.byteLength(body))],
        ],
        body,
      );
      return { bytes, at: v.abortAt(i, r) };
    });
    await Promise.all(calls.map((c) => abortedCall(gw.port, c.bytes, c.at)));
    const stormEnded = Date.now();
    const open = (): number => openai.open + anthropic.open;
    await within(AFTER_MS, async () => open() === 0 && (await gw.ledger(ACCOUNT)).openHolds === 0);
    await sleep(Math.max(0, stormEnded + AFTER_MS - Date.now()));

    const ledger = await gw.ledger(ACCOUNT);
    const events = await gw.events(ACCOUNT);
    const byStatus: Record<string, number> = {};
    for (const e of events) byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
    const upstreamCalls = openai.calls.length + anthropic.calls.length;
    const fullStreams = openai.served.completion + anthropic.served.output;
    console.log(
      `abuse storm (${v.name}): ${v.calls} calls; ${AFTER_MS / 1000} s later: upstream requests made ${upstreamCalls}, still open ${open()}; ` +
        `open holds ${ledger.openHolds}, held ${ledger.heldNano} nano; usage events ${JSON.stringify(byStatus)}; streams served to the end ${fullStreams}`,
    );

    expect({ upstreamOpen: open(), openHolds: ledger.openHolds, heldNano: ledger.heldNano, fullStreams }).toEqual({
      upstreamOpen: 0,
      openHolds: 0,
      heldNano: 0,
      fullStreams: 0,
    });
    expect(
      events.filter((e) => e.status !== 499).map((e) => `${e.status} ${e.errorCode ?? ''}`),
      'events of aborted calls that are not 499',
    ).toEqual([]);
    expect(events.length).toBeLessThanOrEqual(v.calls);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
  }, 60_000);
});
