// The abuse fuzzer (test/abuse/fuzz-cases.ts) with Claude on AWS Bedrock behind the Anthropic-protocol model: hostile
// bodies and headers on every endpoint a chat model serves (completions, rerank and moderations go to other kinds),
// translated and sent through Invoke (signed with SigV4, the fake verifying every signature) or refused before. None
// may get a 5xx, an answer outside the caller's dialect, or no answer; and the fuzz must reach Bedrock, or it tested
// only the front door. On the in-memory store (test/abuse/fuzz.test.ts runs the same cases on Redis with the other
// upstreams).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectOfPath, dialectProblem } from '../abuse/dialect.ts';
import { fuzzCase, CHAT_ENDPOINTS, RESPONSES, type FuzzCase } from '../abuse/fuzz-cases.ts';
import { prng, startAbuseGateway, type AbuseGateway } from '../abuse/harness.ts';
import { abuseConfig } from '../abuse/manifests.ts';
import { rawRequest, requestBytes, type RawAnswer } from '../abuse/raw-http.ts';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/runtime.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { route, secret } from '../helpers/manifests.ts';

const SEED = Number(process.env.SVC_FUZZ_SEED ?? 24_2026);
const N = Number(process.env.SVC_FUZZ_N ?? 800);
const CONCURRENCY = 8;
const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAFAKEFUZZ00000001', AWS_SECRET_ACCESS_KEY: 'fake-fuzz-secret-0123456789' };

let openai: FakeUpstream;
let bedrock: FakeBedrock;
let gw: AbuseGateway;
let key: string;

beforeAll(async () => {
  [openai, bedrock] = await Promise.all([
    startFakeUpstream('fuzz-openai'),
    startFakeBedrock({ keys: [{ accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: KEYS.AWS_SECRET_ACCESS_KEY }] }),
  ]);
  const cfg = abuseConfig({ openai: openai.baseUrl, anthropic: 'http://127.0.0.1:9' });
  key = cfg.key;
  const claude = route('chat-a', [
    {
      name: 'bedrock',
      provider: 'bedrock',
      region: 'us-east-1',
      baseUrl: bedrock.url,
      upstreamModel: 'anthropic.claude-haiku-4-5-20251001-v1:0',
      credentials: { secretKeyRef: { name: 'aws-keys' } },
    },
  ]);
  const docs = cfg.docs.map((d) =>
    (d as { metadata?: { name?: string }; kind?: string }).kind === 'ModelRoute' && (d as { metadata: { name: string } }).metadata.name === 'chat-a'
      ? claude
      : d,
  );
  gw = await startAbuseGateway([...docs, secret('aws-keys', KEYS)]);
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), bedrock?.close()]);
});

describe(`fuzz with Claude on Bedrock: ${N} hostile requests, seed ${SEED}`, () => {
  it("answers no 5xx, nothing outside the caller's dialect, and reaches Bedrock", async () => {
    const r = prng(SEED);
    const cases = Array.from({ length: N }, () => fuzzCase(r, key, [...CHAT_ENDPOINTS, RESPONSES]));
    const bad: Array<[FuzzCase, RawAnswer, string]> = [];
    const byStatus: Record<string, number> = {};
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < cases.length) {
        const c = cases[next++] as FuzzCase;
        const a = await rawRequest(gw.port, requestBytes(c.endpoint.method, c.path, [...c.headers, ['connection', 'close']], c.body), { timeoutMs: 15_000 });
        byStatus[String(a.status ?? 'none')] = (byStatus[String(a.status ?? 'none')] ?? 0) + 1;
        if (a.status === null) bad.push([c, a, 'no answer']);
        else if (a.status >= 500) bad.push([c, a, '5xx']);
        else if (a.status >= 300) {
          const p = dialectProblem(dialectOfPath(c.path), a.body);
          if (p) bad.push([c, a, p]);
        }
      }
    };
    const calls = bedrock.calls.length;
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    console.log(`bedrock fuzz: ${N} requests, status ${JSON.stringify(byStatus)}, Bedrock calls ${bedrock.calls.length - calls}`);
    for (const [c, a, why] of bad.slice(0, 8))
      console.log(`  ${why}: ${c.endpoint.method} ${c.path.slice(0, 50)} ${c.what} -> ${a.status} ${a.body.slice(0, 160)}`);
    expect(bad.length).toBe(0);
    expect(bedrock.calls.length - calls, 'calls that reached Bedrock').toBeGreaterThan(N / 20);
    expect(
      bedrock.calls.every((c) => c.auth === KEYS.AWS_ACCESS_KEY_ID),
      'every call signed correctly',
    ).toBe(true);
  }, 120_000);
});
