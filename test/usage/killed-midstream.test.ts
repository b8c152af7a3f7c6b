// A standalone gateway on Redis SIGKILLed with streams in flight (tokens already served upstream): what its calls
// leave behind, as docs/operations.md states it. Each call's hold stays open, counted against the key's budget and the
// account's balance, until its deadline (its admission + SVC_HOLD_TTL_SECONDS); no usage event and no charge is
// recorded for it; the next admission after the deadline (by any process) releases it.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { accountKeys } from '../../gateway/contract/redis-keys.ts';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import type { RedisStore } from '../../gateway/state/redis-store.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { fleetStore, startFleet, type Fleet } from '../helpers/fleet.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

const TTL_S = 15;
const STREAMS = 4;
const ACCOUNT = 'a-killed';

let redis: TestRedis;
let up: FakeUpstream;
let fleet: Fleet;
let store: RedisStore;
let raw: Redis;
let key: string;
let docs: object[];

beforeAll(async () => {
  [redis, up] = await Promise.all([startRedis('killed-midstream'), startFakeUpstream('slow')]);
  // A long answer, a word every 100 ms: the streams are still running when the process is killed.
  up.fallback = () => ({ kind: 'reply', content: 'word '.repeat(200).trim(), chunkDelayMs: 100 });
  // 1 and 2 USD per million tokens: a call with max_tokens 1000 holds about 0.00205 USD; 4 of them fit in 0.01.
  const k = apiKey('killed-key', ACCOUNT, { monthlyBudgetUsd: 0.01 });
  key = k.key;
  docs = [
    plan('builder', { tier: 2 }),
    account(ACCOUNT, 'builder', { trialCreditUsd: 10 }),
    ...k.docs,
    route('gpt-slow', [{ name: 'slow', provider: 'openai', baseUrl: up.baseUrl, upstreamModel: 'up-slow' }], {
      pricing: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 },
    }),
  ];
  // Two processes: the first is killed, the second shows what the other replicas see meanwhile.
  fleet = await startFleet(2, redis, docs, { SVC_HOLD_TTL_SECONDS: String(TTL_S), SVC_PROBE_INTERVAL_SECONDS: '86400' });
  store = await fleetStore(redis);
  raw = new Redis(redis.url);
}, 60_000);

afterAll(async () => {
  raw?.disconnect();
  await store?.close();
  await fleet?.stop();
  await up?.close();
  await redis?.stop();
});

const body = (stream: boolean): string =>
  JSON.stringify({ model: 'gpt-slow', messages: [{ role: 'user', content: 'Tell me a long story.' }], max_tokens: 1000, stream });

const call = (url: string, stream: boolean): Promise<Response> =>
  fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body(stream) });

/** Starts a stream and returns once its first content chunk arrived (the call is admitted and served upstream). */
async function streamUntilContent(url: string): Promise<void> {
  const res = await call(url, true);
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let seen = '';
  while (!seen.includes('"content":"word')) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended before its content');
    seen += Buffer.from(value).toString('utf8');
  }
  // Left open: the process is killed under it.
  void reader.read().catch(() => undefined);
}

it('a SIGKILLed gateway leaves its streams uncharged, with no usage event, their holds blocking the budget until admission + SVC_HOLD_TTL_SECONDS', async () => {
  const [gw, next] = fleet.procs;
  if (!gw || !next) throw new Error('no gateways');
  const admittedFrom = Date.now();
  await Promise.all(Array.from({ length: STREAMS }, () => streamUntilContent(gw.url)));
  const admittedBy = Date.now();
  gw.child.kill('SIGKILL');
  await until(() => gw.child.exitCode !== null || gw.child.signalCode !== null, 10_000, 'the gateway exited');
  const streamed = up.calls.filter((c) => c.body.stream === true).length;

  // What the killed calls left: their holds, counted; no charge; no usage event.
  const left = await store.ledger(ACCOUNT);
  const deadlines = (await raw.zrange(accountKeys(redis.prefix, ACCOUNT).holds, 0, -1, 'WITHSCORES')).filter((_x, i) => i % 2 === 1).map(Number);
  console.log(
    `SIGKILL with ${STREAMS} streams in flight (${streamed} upstream streams, each cut after its first words): ${left.openHolds} holds left, ` +
      `${left.heldNano / NANO_PER_USD} USD held, ${left.spentNano / NANO_PER_USD} USD charged, ${(await store.usageEvents(ACCOUNT)).length} usage events; ` +
      `each hold's deadline is its admission + ${((Math.min(...deadlines) - admittedBy) / 1000).toFixed(1)} to ${((Math.max(...deadlines) - admittedFrom) / 1000).toFixed(1)} s (SVC_HOLD_TTL_SECONDS=${TTL_S})`,
  );
  expect(left.openHolds).toBe(STREAMS);
  expect(left.heldNano).toBeGreaterThan(0);
  expect(left.spentNano).toBe(0);
  expect(await store.usageEvents(ACCOUNT)).toEqual([]);
  expect(deadlines).toHaveLength(STREAMS);
  for (const d of deadlines) {
    expect(d).toBeGreaterThanOrEqual(admittedFrom + TTL_S * 1000);
    expect(d).toBeLessThanOrEqual(admittedBy + TTL_S * 1000);
  }

  // The other process on the same Redis: until the deadlines pass, the dead calls' holds count against the budget.
  const blocked = await call(next.url, false);
  const text = await blocked.text();
  // (Unless this machine took longer than SVC_HOLD_TTL_SECONDS since the kill to get here.)
  if (Date.now() < Math.min(...deadlines)) expect({ status: blocked.status, budget: text.includes('budget_exceeded') }).toEqual({ status: 402, budget: true });

  // After the deadlines, the next admission releases them: the call is served, and only it is charged and recorded.
  await until(() => Date.now() > Math.max(...deadlines), (TTL_S + 30) * 1000, 'the holds expired');
  const after = await call(next.url, false);
  expect(after.status).toBe(200);
  await after.text();
  await until(async () => (await store.ledger(ACCOUNT)).openHolds === 0, 10_000, 'the call settled');
  const events = await store.usageEvents(ACCOUNT);
  const settled = await store.ledger(ACCOUNT);
  // The refused call and this one: the killed streams never get an event.
  expect(events.map((e) => `${e.status} ${e.stream}`).sort()).toEqual(['200 false', '402 false']);
  expect(settled).toMatchObject({ openHolds: 0, heldNano: 0, spentNano: events.reduce((n, e) => n + e.costNano, 0) });
}, 120_000);
