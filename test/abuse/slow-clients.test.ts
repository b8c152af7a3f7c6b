// Issue 18, item 5: header, request and idle timeouts. A client that trickles its body or its headers, or connects
// and says nothing, is closed in bounded time (408 in the caller's dialect, or the socket closed), while normal
// calls keep being served meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { dialectOfPath, dialectProblem } from './dialect.ts';
import { sleep, startAbuseGateway, type AbuseGateway, type Timeouts } from './harness.ts';
import { abuseConfig } from './manifests.ts';
import { rawRequest, requestBytes, type RawAnswer } from './raw-http.ts';

const TIMEOUTS: Timeouts = { headersMs: 500, requestMs: 1000, idleMs: 2000 };
/**
 * How long past its timeout a slow client may stay connected (timer granularity, a loaded machine): generous, and
 * still below GIVE_UP_MS, where the clients give up by themselves, so a timeout not enforced still fails.
 */
const SLACK_MS = 5000;
const GIVE_UP_MS = 8000;

let openai: FakeUpstream;
let anthropic: FakeAnthropic;
let gw: AbuseGateway;
let key: string;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeUpstream('slow-openai'), startFakeAnthropic('slow-anthropic')]);
  const cfg = abuseConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  key = cfg.key;
  gw = await startAbuseGateway(cfg.docs, { timeouts: TIMEOUTS });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

const chat = JSON.stringify({ model: 'chat-o', messages: [{ role: 'user', content: 'Hello there, slowly' }], max_tokens: 20 });

/** A valid key and headers, then the body one byte every 200 ms. */
function trickleBody(path: string): Promise<RawAnswer> {
  const head = requestBytes('POST', path, [
    ['authorization', `Bearer ${key}`],
    ['content-type', 'application/json'],
    ['content-length', String(Buffer.byteLength(chat))],
  ]);
  return rawRequest(gw.port, head, { timeoutMs: GIVE_UP_MS, trickle: { pieces: [...chat], everyMs: 200 } });
}

/** The request line, then one more header line every 200 ms, never the blank line that ends them. */
function trickleHeaders(path: string): Promise<RawAnswer> {
  const head = `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n`;
  const pieces = Array.from({ length: 60 }, (_, i) => `x-slow-${i}: ${'z'.repeat(i % 7)}\r\n`);
  return rawRequest(gw.port, head, { timeoutMs: GIVE_UP_MS, trickle: { pieces, everyMs: 200 } });
}

/** `path` null: the headers never ended, so the gateway may not know the path; an error in either dialect will do. */
function expectClosed(path: string | null, r: RawAnswer, boundMs: number): void {
  expect(r.timedOut, `still connected after ${r.ms} ms`).toBe(false);
  expect(r.ms, 'closed in time').toBeLessThan(boundMs);
  if (r.status !== null) {
    expect(r.status).toBe(408);
    if (path) expect(dialectProblem(dialectOfPath(path), r.body)).toBeNull();
    else expect([dialectProblem('openai', r.body), dialectProblem('anthropic', r.body)], r.body).toContain(null);
  }
}

describe('slow clients are closed by the timeouts', () => {
  it.each(['/v1/chat/completions', '/anthropic/v1/messages'])('%s: a body trickled a byte every 200 ms', async (path) => {
    const r = await trickleBody(path);
    expectClosed(path, r, TIMEOUTS.requestMs + SLACK_MS);
  });

  it.each(['/v1/chat/completions', '/anthropic/v1/messages'])('%s: headers trickled a line every 200 ms (slowloris)', async (path) => {
    const r = await trickleHeaders(path);
    expectClosed(null, r, TIMEOUTS.headersMs + SLACK_MS);
  });

  it('a connection that sends nothing', async () => {
    const r = await rawRequest(gw.port, '', { timeoutMs: GIVE_UP_MS });
    expect(r.timedOut, `still connected after ${r.ms} ms`).toBe(false);
    expect(r.ms).toBeLessThan(TIMEOUTS.idleMs + SLACK_MS);
  });

  it('an idle keep-alive connection, after its answer', async () => {
    const req = requestBytes('GET', '/v1/models', [['connection', 'keep-alive']]);
    const r = await rawRequest(gw.port, req, { timeoutMs: GIVE_UP_MS, lingerMs: TIMEOUTS.idleMs + SLACK_MS });
    expect(r.status).toBe(200);
    expect(r.closed, 'closed by the server while idle').toBe(true);
  });

  it('normal calls are served while 20 slow clients hang on', async () => {
    const slow = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? trickleBody('/v1/chat/completions') : trickleHeaders('/anthropic/v1/messages')));
    const statuses: number[] = [];
    const slowest: number[] = [];
    for (let i = 0; i < 12; i++) {
      const t0 = Date.now();
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: chat,
      });
      await res.text();
      statuses.push(res.status);
      slowest.push(Date.now() - t0);
      await sleep(200);
    }
    const answers = await Promise.all(slow);
    expect(
      statuses.every((s) => s === 200),
      JSON.stringify(statuses),
    ).toBe(true);
    // Served, not starved: a bound only a server that made normal calls wait on the slow clients exceeds; latency is
    // the bench's business.
    expect(Math.max(...slowest), 'slowest normal call (ms)').toBeLessThan(TIMEOUTS.requestMs + SLACK_MS);
    const stillOpen = answers.filter((a) => a.timedOut).length;
    expect(stillOpen, 'slow clients never closed').toBe(0);
  });
});
