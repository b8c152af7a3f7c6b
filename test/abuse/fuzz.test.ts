// Issue 18 / TESTING.md reliability cases 5 and 14: a seeded fuzzer of hostile bodies and headers on every endpoint,
// both dialects, against a gateway on real Redis. It counts 5xx answers, answers outside the caller's dialect,
// requests left unanswered, and the quota refused input spent (RPM slots in the key's Redis call log, money in the
// usage events, holds in the ledger): each must be 0. SVC_FUZZ_SEED and SVC_FUZZ_N replay or widen a run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { dialectOfPath, dialectProblem } from './dialect.ts';
import { fuzzCase, MODEL_ENDPOINTS, RESPONSES, type Endpoint, type FuzzCase } from './fuzz-cases.ts';
import { prng, startAbuseGateway, within, type AbuseGateway } from './harness.ts';
import { abuseConfig, ACCOUNT, KEY_NAME } from './manifests.ts';
import { rawRequest, requestBytes, type RawAnswer } from './raw-http.ts';
import { TEST_PEPPER } from '../helpers/gateway.ts';

const SEED = Number(process.env.SVC_FUZZ_SEED ?? 20_260_118);
const N = Number(process.env.SVC_FUZZ_N ?? 3000);
const CONCURRENCY = 8;
/** The key's call log keeps 60 s: the whole run must fit well inside it for the slot count to be exact. */
const WINDOW_MS = 60_000;

let redis: TestRedis;
let openai: FakeUpstream;
let anthropic: FakeAnthropic;
let gw: AbuseGateway;
let key: string;

beforeAll(async () => {
  [redis, openai, anthropic] = await Promise.all([startRedis('abuse-fuzz'), startFakeUpstream('fuzz-openai'), startFakeAnthropic('fuzz-anthropic')]);
  const cfg = abuseConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  key = cfg.key;
  gw = await startAbuseGateway(cfg.docs, { redis });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
  await redis?.stop();
});

/** POST /v1/responses is fuzzed too when this build has it (it is being added alongside). */
async function endpoints(): Promise<Endpoint[]> {
  const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const body = await res.text();
  const absent = res.status === 404 && body.includes('"not_found"');
  return absent ? MODEL_ENDPOINTS : [...MODEL_ENDPOINTS, RESPONSES];
}

interface Tally {
  byStatus: Record<string, number>;
  fiveXx: Array<[FuzzCase, RawAnswer]>;
  outsideDialect: Array<[FuzzCase, RawAnswer, string]>;
  unanswered: Array<[FuzzCase, RawAnswer]>;
  admitted2xx: number;
}

async function fire(cases: FuzzCase[]): Promise<Tally> {
  const t: Tally = { byStatus: {}, fiveXx: [], outsideDialect: [], unanswered: [], admitted2xx: 0 };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < cases.length) {
      const c = cases[next++] as FuzzCase;
      const bytes = requestBytes(c.endpoint.method, c.path, [...c.headers, ['connection', 'close']], c.body);
      const a = await rawRequest(gw.port, bytes, { timeoutMs: 15_000 });
      const s = a.status === null ? 'none' : String(a.status);
      t.byStatus[s] = (t.byStatus[s] ?? 0) + 1;
      if (a.status === null) t.unanswered.push([c, a]);
      else if (a.status >= 500) t.fiveXx.push([c, a]);
      if (a.status !== null && a.status >= 200 && a.status < 300) {
        if (c.endpoint.admits) t.admitted2xx++;
      } else if (a.status !== null) {
        const problem = dialectProblem(dialectOfPath(c.path), a.body);
        if (problem) t.outsideDialect.push([c, a, problem]);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return t;
}

const show = (c: FuzzCase, a: RawAnswer, extra = ''): string =>
  `${c.endpoint.method} ${c.path.slice(0, 50)} ${c.what} -> ${a.status ?? 'no answer'} ${extra || a.body.slice(0, 140)}`;

describe(`fuzz: ${N} hostile requests, seed ${SEED}, concurrency ${CONCURRENCY}, on Redis`, () => {
  it("answers no 5xx, nothing outside the caller's dialect, and refused input spends no quota", async () => {
    const eps = await endpoints();
    const r = prng(SEED);
    const cases = Array.from({ length: N }, () => fuzzCase(r, key, eps));
    const admitsBefore = gw.calls.admit;
    const started = Date.now();
    const t = await fire(cases);
    const ms = Date.now() - started;
    const settled = await within(5000, async () => (await gw.ledger(ACCOUNT)).openHolds === 0);
    const ledger = await gw.ledger(ACCOUNT);
    const slots = await redis.client.zcard(`${redis.prefix}:{a:${ACCOUNT}}:tpm:${KEY_NAME}`);
    const events = await gw.events(ACCOUNT);
    const refusedSpend = events.filter((e) => e.status >= 400).reduce((s, e) => s + e.costNano, 0);
    const slotsOfRefused = slots - t.admitted2xx;

    console.log(
      `abuse fuzz: ${N} requests (seed ${SEED}, ${eps.length + 5} endpoints${eps.includes(RESPONSES) ? ' incl. /v1/responses' : ''}) in ${(ms / 1000).toFixed(1)} s; ` +
        `status ${JSON.stringify(t.byStatus)}; 5xx ${t.fiveXx.length}; outside dialect ${t.outsideDialect.length}; unanswered ${t.unanswered.length}; ` +
        `admitted ${gw.calls.admit - admitsBefore}, 2xx model calls ${t.admitted2xx}, RPM slots held ${slots} (by refused input ${slotsOfRefused}); ` +
        `money spent by refused input ${refusedSpend} nano; open holds ${ledger.openHolds}, held ${ledger.heldNano} nano`,
    );
    for (const [c, a] of t.fiveXx.slice(0, 8)) console.log(`  5xx: ${show(c, a)}`);
    for (const [c, a, p] of t.outsideDialect.slice(0, 8)) console.log(`  dialect: ${show(c, a, p)}`);
    for (const [c, a] of t.unanswered.slice(0, 4)) console.log(`  unanswered: ${show(c, a, `after ${a.ms} ms`)}`);

    expect(ms, 'the run must fit in the 60 s call log for the slot count to be exact').toBeLessThan(WINDOW_MS - 10_000);
    expect({
      fiveXx: t.fiveXx.length,
      outsideDialect: t.outsideDialect.length,
      unanswered: t.unanswered.length,
      slotsOfRefused,
      refusedSpend,
      openHolds: ledger.openHolds,
      heldNano: ledger.heldNano,
      settled,
    }).toEqual({ fiveXx: 0, outsideDialect: 0, unanswered: 0, slotsOfRefused: 0, refusedSpend: 0, openHolds: 0, heldNano: 0, settled: true });
    // The fuzz must also reach the upstreams, or it tested only the front door.
    expect(t.admitted2xx).toBeGreaterThan(N / 10);
    // With the response cache on: it was used, and its keys and entries hold nothing of the key but answers.
    const hits = events.filter((e) => e.cache === 'hit').length;
    const cacheKeys = await redis.client.keys(`${redis.prefix}:{a:${ACCOUNT}}:cache*`);
    const dump = (
      await Promise.all(
        cacheKeys.map(
          async (k) =>
            `${k} ${JSON.stringify(await redis.client.dump(k).catch(() => null))} ${JSON.stringify(await redis.client.hgetall(k).catch(() => ({})))}`,
        ),
      )
    ).join('\n');
    console.log(`abuse fuzz: response cache ${hits} hits, ${await redis.client.hlen(`${redis.prefix}:{a:${ACCOUNT}}:cache`)} entries`);
    expect(hits).toBeGreaterThan(0);
    expect(dump.length).toBeGreaterThan(0);
    for (const secret of [key, key.slice(7), TEST_PEPPER]) expect(dump.split(secret).length - 1, 'a key or the pepper in the cache').toBe(0);
  }, 120_000);
});
