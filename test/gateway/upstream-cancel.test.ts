// Issue 21, item 1: a client that leaves cancels its upstream request, in every phase after admission (waiting for
// the upstream's headers, for its first event, mid-stream), and the request's connection is closed with it: counted at
// the upstream, which must see no request and no TCP connection left 1 s later, and no fallback tried for a client
// that is gone. The first-byte timeout closes a stalled attempt's connection too, then falls back. Both endpoints,
// with the official SDKs, streamed and not; a few calls at a time, all of them left.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type AnthropicBehavior, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type Behavior, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';

const FIRST_BYTE_MS = 1500;
/** The upstream's request and connection must be gone this long after the client left. */
const CLOSED_WITHIN_MS = 1000;
/** Calls in flight together: a connection pool with other connections open keeps what an abort leaves behind. */
const CALLS = 4;

let stalledO: FakeUpstream;
let spareO: FakeUpstream;
let stalledA: FakeAnthropic;
let spareA: FakeAnthropic;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  [stalledO, spareO, stalledA, spareA] = await Promise.all([
    startFakeUpstream('stalled-openai'),
    startFakeUpstream('spare-openai'),
    startFakeAnthropic('stalled-anthropic'),
    startFakeAnthropic('spare-anthropic'),
  ]);
  const b = basics();
  const timeouts = { firstByteMs: FIRST_BYTE_MS };
  gw = await startGateway([
    ...b.docs,
    route('hang-o', [
      { name: 'first', provider: 'openai', baseUrl: stalledO.baseUrl, timeouts },
      { name: 'spare', provider: 'openai', baseUrl: spareO.baseUrl, weight: 0 },
    ]),
    route('hang-a', [
      { name: 'first', provider: 'anthropic', baseUrl: stalledA.baseUrl, timeouts },
      { name: 'spare', provider: 'anthropic', baseUrl: spareA.baseUrl, weight: 0 },
    ]),
  ]);
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([stalledO?.close(), spareO?.close(), stalledA?.close(), spareA?.close()]);
});

type Phase = 'headers' | 'first event' | 'mid-stream';

interface Side {
  name: string;
  stalled: () => FakeUpstream | FakeAnthropic;
  spare: () => FakeUpstream | FakeAnthropic;
  /** Queues what the first target does in this phase. */
  script: (phase: Phase) => void;
  /** Makes one call and reads its answer (a stream to the end); rejects when aborted. */
  call: (stream: boolean, signal: AbortSignal, onChunk: () => void) => Promise<void>;
}

const OPENAI_PHASES: Record<Phase, Behavior> = {
  headers: { kind: 'stall' },
  'first event': { kind: 'stall-after-headers' },
  'mid-stream': { kind: 'reply', content: 'word '.repeat(100).trim(), chunkDelayMs: 100 },
};
const ANTHROPIC_PHASES: Record<Phase, AnthropicBehavior> = {
  headers: { kind: 'stall' },
  'first event': { kind: 'stall-after-headers' },
  'mid-stream': { kind: 'reply', text: 'word '.repeat(100).trim(), chunkDelayMs: 100 },
};

const SIDES: Side[] = [
  {
    name: 'OpenAI endpoint',
    stalled: () => stalledO,
    spare: () => spareO,
    script: (phase) => stalledO.enqueue(OPENAI_PHASES[phase]),
    call: async (stream, signal, onChunk) => {
      const messages = [{ role: 'user' as const, content: 'hi' }];
      if (!stream) return void (await openai.chat.completions.create({ model: 'hang-o', messages }, { signal }));
      const s = await openai.chat.completions.create({ model: 'hang-o', messages, stream: true }, { signal });
      for await (const _chunk of s) onChunk();
    },
  },
  {
    name: 'Anthropic endpoint',
    stalled: () => stalledA,
    spare: () => spareA,
    script: (phase) => stalledA.enqueue(ANTHROPIC_PHASES[phase]),
    call: async (stream, signal, onChunk) => {
      const body = { model: 'hang-a', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };
      if (!stream) return void (await anthropic.messages.create(body, { signal }));
      const s = await anthropic.messages.create({ ...body, stream: true }, { signal });
      for await (const _event of s) onChunk();
    },
  },
];

const CASES: Array<{ phase: Phase; stream: boolean }> = [
  { phase: 'headers', stream: false },
  { phase: 'headers', stream: true },
  { phase: 'first event', stream: true },
  { phase: 'mid-stream', stream: true },
];

/** What an upstream still sees: requests without an answer's end, and TCP connections. */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const seen = (u: FakeUpstream | FakeAnthropic): { openRequests: number; openConnections: number } => ({ openRequests: u.open, openConnections: u.sockets });

describe.each(SIDES)('$name: a client that leaves', (side) => {
  it.each(CASES)(
    'while the gateway waits for the upstream ($phase, stream $stream) cancels the request and closes its connection',
    async ({ phase, stream }) => {
      const stalled = side.stalled();
      const before = { calls: stalled.calls.length, spare: side.spare().calls.length };
      for (let i = 0; i < CALLS; i++) side.script(phase);
      const ctrls = Array.from({ length: CALLS }, () => new AbortController());
      const chunks = ctrls.map(() => 0);
      // Rejects when aborted (an SDK's stream may also just end): either way the call is over for the client.
      const done = Promise.all(ctrls.map((c, i) => side.call(stream, c.signal, () => chunks[i]!++).catch(() => {})));
      // Leave once the upstream has the requests (and, mid-stream, once each stream is flowing).
      const flowing = (): boolean => phase !== 'mid-stream' || chunks.every((n) => n >= 2);
      await until(() => stalled.calls.length === before.calls + CALLS && flowing(), 5000, 'the upstream got the calls');
      // One after the other, the others still in flight (as clients come and go).
      for (const c of ctrls) {
        c.abort();
        await sleep(50);
      }
      await done;
      await until(
        () => stalled.open === 0 && stalled.sockets === 0,
        CLOSED_WITHIN_MS,
        `the upstream's request and connection closed (${JSON.stringify(seen(stalled))})`,
      ).catch(() => {});
      expect(seen(stalled), 'what the upstream still sees 1 s after the clients left').toEqual({ openRequests: 0, openConnections: 0 });
      expect(side.spare().calls.length - before.spare, 'fallback calls for a client that is gone').toBe(0);
      await until(async () => (await gw.store.ledger('acme')).openHolds === 0, 2000, 'the hold released').catch(() => {});
      expect((await gw.store.ledger('acme')).openHolds).toBe(0);
    },
  );
});

describe.each(SIDES)('$name: the first-byte timeout', (side) => {
  it('ends a stalled streamed attempt, closes its connection, and falls back', async () => {
    const stalled = side.stalled();
    const spareBefore = side.spare().calls.length;
    for (let i = 0; i < CALLS; i++) side.script('first event');
    let chunks = 0;
    await Promise.all(Array.from({ length: CALLS }, () => side.call(true, new AbortController().signal, () => chunks++)));
    expect(chunks).toBeGreaterThan(0);
    expect(side.spare().calls.length - spareBefore).toBe(CALLS);
    await until(() => stalled.open === 0 && stalled.sockets === 0, CLOSED_WITHIN_MS, 'closed').catch(() => {});
    expect(seen(stalled), 'what the stalled upstream still sees after the timeout').toEqual({ openRequests: 0, openConnections: 0 });
  });
});
