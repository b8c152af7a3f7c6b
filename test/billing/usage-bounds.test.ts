// Issue 27 items 1-3 as a careless client and a hostile upstream try them, with the official SDKs, on the memory store
// and on Redis with 2 gateway processes: the hold is a true upper bound of a call's cost (n counted, the output cap
// sent upstream, images at their worst case), usage reported beyond what the request could use is clamped and
// flagged, and a served call whose usage is missing or malformed is estimated, never free. Spend never above a
// budget or a balance, TPM never above its limit; a call that can never fit is a 400 before any upstream call.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import { IMAGE_TOKENS } from '../../gateway/pipeline/non-text.ts';
import type { Ledger } from '../../gateway/state/store.ts';
import type { UsageEvent } from '../../gateway/usage/event.ts';
import { HONEST_IMAGE_TOKENS, startUsageFake, type UsageFake } from '../fakes/usage-upstream.ts';
import { fleetStore, startFleet } from '../helpers/fleet.ts';
import { startGateway } from '../helpers/gateway.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { metricSum, scrape } from '../helpers/prom.ts';
import { startRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

// 1 and 2 USD per million tokens (1000 and 2000 nano-USD a token), the route's default output cap 4096.
const PRICING = { inputPerMTokUsd: 1, outputPerMTokUsd: 2 };
const IN_NANO = 1000;
const OUT_NANO = 2000;
const usd = (x: number): number => Math.round(x * NANO_PER_USD);

const KEYS = {
  n16: { account: 'a-n16', credit: 10, spec: { monthlyBudgetUsd: 0.05 } },
  tpm: { account: 'a-tpm', credit: 10, spec: { limits: { tpm: 5000 } } },
  nomax: { account: 'a-nomax', credit: 10, spec: { monthlyBudgetUsd: 0.05 } },
  images: { account: 'a-images', credit: 10, spec: { monthlyBudgetUsd: 0.05 } },
  imagesok: { account: 'a-imagesok', credit: 10, spec: {} },
  huge: { account: 'a-huge', credit: 11, spec: { monthlyBudgetUsd: 5 } },
  bad: { account: 'a-bad', credit: 10, spec: {} },
} as const;
type KeyName = keyof typeof KEYS;

function manifests(fake: UsageFake): { docs: object[]; keys: Record<KeyName, string> } {
  const made = Object.entries(KEYS).map(([name, k]) => ({ name, ...apiKey(name, k.account, k.spec) }));
  return {
    keys: Object.fromEntries(made.map((m) => [m.name, m.key])) as Record<KeyName, string>,
    docs: [
      plan('builder', { tier: 2, anthropicEndpoint: true }),
      ...Object.values(KEYS).map((k) => account(k.account, 'builder', { trialCreditUsd: k.credit })),
      ...made.flatMap((m) => m.docs),
      route('gpt-x', [{ name: 'fake-chat', provider: 'openai', baseUrl: fake.baseUrl, upstreamModel: 'up-gpt' }], { pricing: PRICING }),
      route('gpt-r', [{ name: 'fake-responses', provider: 'openai', baseUrl: fake.baseUrl, upstreamModel: 'up-gpt', responsesApi: true }], {
        pricing: PRICING,
      }),
      route('claude-x', [{ name: 'fake-claude', provider: 'anthropic', baseUrl: fake.url, upstreamModel: 'up-claude' }], { pricing: PRICING }),
      route('embed-x', [{ name: 'fake-embed', provider: 'openai', baseUrl: fake.baseUrl, upstreamModel: 'up-embed' }], {
        type: 'embeddings',
        pricing: PRICING,
      }),
    ],
  };
}

/** One way to run the gateway: its URLs, and what its store and metrics say. */
interface Bench {
  urls: string[];
  keys: Record<KeyName, string>;
  fake: UsageFake;
  ledger(account: string): Promise<Ledger>;
  events(account: string): Promise<UsageEvent[]>;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  close(): Promise<void>;
}

async function memoryBench(): Promise<Bench> {
  const fake = await startUsageFake();
  const m = manifests(fake);
  const gw = await startGateway(m.docs);
  return {
    urls: [gw.url],
    keys: m.keys,
    fake,
    ledger: (a) => gw.store.ledger(a),
    events: async (a) => gw.sink.events.filter((e) => e.account === a),
    metric: async (name, labels) => metricSum(await gw.metrics.registry.metrics(), name, labels),
    close: async () => {
      await gw.close();
      await fake.close();
    },
  };
}

async function redisBench(): Promise<Bench> {
  const fake = await startUsageFake();
  const m = manifests(fake);
  const redis = await startRedis('usage-bounds');
  const fleet = await startFleet(2, redis, m.docs);
  const store = await fleetStore(redis);
  return {
    urls: fleet.urls,
    keys: m.keys,
    fake,
    ledger: (a) => store.ledger(a),
    events: (a) => store.usageEvents(a),
    metric: async (name, labels) => (await Promise.all(fleet.metricsUrls.map(scrape))).reduce((s, text) => s + metricSum(text, name, labels), 0),
    close: async () => {
      await store.close();
      await fleet.stop();
      await redis.stop();
      await fake.close();
    },
  };
}

interface Result {
  status: number;
  code: string | null;
  retryAfter: string | null;
}

/** A call through the OpenAI SDK (no retries); its status and error code, whichever way it ended. */
async function attempt(f: () => Promise<unknown>): Promise<Result> {
  try {
    await f();
    return { status: 200, code: null, retryAfter: null };
  } catch (err) {
    if (err instanceof OpenAI.APIError || err instanceof Anthropic.APIError) {
      const body = err.error as { error?: { code?: string; type?: string }; code?: string } | undefined;
      return {
        status: err.status ?? 0,
        code: (err as { code?: string }).code ?? body?.error?.code ?? body?.error?.type ?? null,
        retryAfter: err.headers?.get('retry-after') ?? null,
      };
    }
    throw err;
  }
}

function openai(b: Bench, key: KeyName, i = 0): OpenAI {
  return new OpenAI({ baseURL: `${b.urls[i % b.urls.length]}/v1`, apiKey: b.keys[key], maxRetries: 0 });
}

function anthropic(b: Bench, key: KeyName, i = 0): Anthropic {
  return new Anthropic({ baseURL: `${b.urls[i % b.urls.length]}/anthropic`, apiKey: b.keys[key], authToken: null, maxRetries: 0 });
}

/** `total` calls in waves of 4 at once, spread over the processes. */
async function waves(total: number, call: (i: number) => Promise<Result>): Promise<Result[]> {
  const out: Result[] = [];
  for (let i = 0; i < total; i += 4) out.push(...(await Promise.all(Array.from({ length: Math.min(4, total - i) }, (_x, j) => call(i + j)))));
  return out;
}

async function settled(b: Bench, account: string): Promise<Ledger> {
  await until(async () => (await b.ledger(account)).openHolds === 0, 10_000, `holds of ${account} settled`);
  return b.ledger(account);
}

const statuses = (rs: Result[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const r of rs) out[`${r.status} ${r.code ?? ''}`.trim()] = (out[`${r.status} ${r.code ?? ''}`.trim()] ?? 0) + 1;
  return out;
};

describe.each([
  ['memory store', memoryBench],
  ['Redis, 2 gateway processes', redisBench],
])('money bounds (%s)', (_name, make) => {
  let b: Bench;
  beforeAll(async () => {
    b = await make();
  }, 60_000);
  afterAll(async () => {
    await b?.close();
  });

  it('counts n: 20 calls of n 16 and max_tokens 1000 stay within a 0.05 USD budget, each sent upstream with its cap', async () => {
    const before = b.fake.calls.length;
    const rs = await waves(20, (i) =>
      attempt(() => openai(b, 'n16', i).chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], n: 16, max_tokens: 1000 })),
    );
    const ledger = await settled(b, 'a-n16');
    console.log(`n:16 x 20 on a 0.05 USD budget: ${JSON.stringify(statuses(rs))}; spent ${ledger.spentNano / NANO_PER_USD} USD (before the fix: 0.128)`);
    expect(ledger.spentNano).toBeLessThanOrEqual(usd(0.05));
    expect(rs.filter((r) => r.status === 200).length).toBeGreaterThan(0);
    expect(rs.filter((r) => r.status !== 200).every((r) => r.status === 402 && r.code === 'budget_exceeded')).toBe(true);
    const sent = b.fake.calls.slice(before).map((c) => c.body);
    expect(sent.length).toBe(rs.filter((r) => r.status === 200).length);
    for (const body of sent) expect(body).toMatchObject({ n: 16, max_tokens: 1000 });
  });

  it('counts n against TPM: n 16 can never fit 5000 tokens a minute (400, no retry-after, no upstream call); n 4 at once serves at most 5000', async () => {
    const before = b.fake.calls.length;
    const never = await attempt(() =>
      openai(b, 'tpm').chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], n: 16, max_tokens: 1000 }),
    );
    expect(never).toEqual({ status: 400, code: 'request_too_large_for_limit', retryAfter: null });
    expect(b.fake.calls.length).toBe(before);
    const rs = await Promise.all(
      Array.from({ length: 6 }, (_x, i) =>
        attempt(() => openai(b, 'tpm', i).chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], n: 4, max_tokens: 1000 })),
      ),
    );
    await settled(b, 'a-tpm');
    const served = (await b.events('a-tpm')).filter((e) => e.status === 200).reduce((s, e) => s + e.inputTokens + e.outputTokens, 0);
    console.log(`TPM 5000, 6 calls of n:4 x 1000 at once: ${JSON.stringify(statuses(rs))}; tokens served ${served} (before the fix: 64,040 with n:16)`);
    expect(served).toBeLessThanOrEqual(5000);
    expect(rs.filter((r) => r.status === 200)).toHaveLength(1);
    expect(rs.filter((r) => r.status === 429).every((r) => r.code === 'rate_limited' && r.retryAfter !== null)).toBe(true);
  });

  it('sends the cap the hold assumed when the client gives none: 20 calls without max_tokens stay within a 0.05 USD budget', async () => {
    const before = b.fake.calls.length;
    const rs = await waves(20, (i) =>
      attempt(() => openai(b, 'nomax', i).chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] })),
    );
    const ledger = await settled(b, 'a-nomax');
    console.log(
      `no max_tokens x 20 on a 0.05 USD budget: ${JSON.stringify(statuses(rs))}; spent ${ledger.spentNano / NANO_PER_USD} USD (before the fix: 0.240)`,
    );
    expect(ledger.spentNano).toBeLessThanOrEqual(usd(0.05));
    const sent = b.fake.calls.slice(before).map((c) => c.body);
    expect(sent.length).toBeGreaterThan(0);
    for (const body of sent) expect(body.max_completion_tokens).toBe(4096);
  });

  it('counts images at their worst case: 40 image URLs never reach the upstream on a 0.05 USD budget; one that fits is charged what was used', async () => {
    const content = [
      { type: 'text' as const, text: 'Describe these.' },
      ...Array.from({ length: 40 }, (_x, i) => ({ type: 'image_url' as const, image_url: { url: `https://img.example/${i}.png` } })),
    ];
    const before = b.fake.calls.length;
    const rs = await waves(10, (i) =>
      attempt(() => openai(b, 'images', i).chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content }], max_tokens: 10 })),
    );
    const ledger = await settled(b, 'a-images');
    console.log(
      `40 image URLs x 10 on a 0.05 USD budget: ${JSON.stringify(statuses(rs))}; spent ${ledger.spentNano / NANO_PER_USD} USD (before the fix: 0.612)`,
    );
    expect(ledger.spentNano).toBeLessThanOrEqual(usd(0.05));
    expect(rs.every((r) => r.status === 402 && r.code === 'budget_exceeded')).toBe(true);
    expect(b.fake.calls.length).toBe(before);
    // A key that can afford the worst case (40 × IMAGE_TOKENS) is served and charged the upstream's count, not clamped.
    expect(
      await attempt(() => openai(b, 'imagesok').chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content }], max_tokens: 10 })),
    ).toMatchObject({
      status: 200,
    });
    await settled(b, 'a-imagesok');
    const [e] = await b.events('a-imagesok');
    expect(e?.inputTokens).toBeGreaterThan(40 * HONEST_IMAGE_TOKENS);
    expect(e?.inputTokens).toBeLessThan(40 * IMAGE_TOKENS);
    expect(e).toMatchObject({ outputTokens: 10, usageClamped: false, usageEstimated: false });
  });

  it('clamps usage beyond what the request could use (5,000,000 and 1e15 tokens): within the hold, budget and balance; flagged and counted', async () => {
    const clampedBefore = await b.metric('svc_gateway_usage_clamped_total');
    const reports = [
      '{"prompt_tokens":5000000,"completion_tokens":5000000,"total_tokens":10000000}',
      '{"prompt_tokens":1e15,"completion_tokens":1e15,"total_tokens":2e15}',
    ];
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const bytes = Buffer.byteLength(JSON.stringify({ model: 'gpt-x', messages, max_tokens: 100 }));
    for (const [i, text] of reports.entries()) {
      b.fake.usageText = text;
      try {
        expect(await attempt(() => openai(b, 'huge', i).chat.completions.create({ model: 'gpt-x', messages, max_tokens: 100 }))).toMatchObject({ status: 200 });
      } finally {
        b.fake.usageText = undefined;
      }
    }
    const ledger = await settled(b, 'a-huge');
    const events = await b.events('a-huge');
    console.log(
      `usage of 5e6 and 1e15 tokens reported for max_tokens 100: charged ${events.map((e) => e.costNano / NANO_PER_USD).join(' and ')} USD (before the fix: 15 and 3,000,000)`,
    );
    expect(events).toHaveLength(2);
    for (const e of events) {
      // The SDK's body: the same fields, maybe in another order, so the same size; the hold is its bytes plus 100 out.
      expect(e).toMatchObject({ inputTokens: bytes, outputTokens: 100, usageClamped: true, usageEstimated: false, costNano: bytes * IN_NANO + 100 * OUT_NANO });
    }
    expect(ledger.spentNano).toBeLessThanOrEqual(usd(5));
    expect(ledger.creditedNano - ledger.spentNano).toBeGreaterThan(0);
    expect(await b.metric('svc_gateway_usage_clamped_total', { reason: 'input' })).toBeGreaterThanOrEqual(2);
    expect((await b.metric('svc_gateway_usage_clamped_total')) - clampedBefore).toBe(4);
  });

  it('bounds a streamed call the same way: a 1e15-token usage chunk is clamped, none at all is estimated', async () => {
    const before = (await b.events('a-huge')).length;
    const messages = [{ role: 'user' as const, content: 'hi' }];
    for (const [i, text] of ['{"prompt_tokens":1e15,"completion_tokens":1e15}', 'absent'].entries()) {
      b.fake.usageText = text;
      try {
        const stream = await openai(b, 'huge', i).chat.completions.create({ model: 'gpt-x', messages, max_tokens: 100, stream: true });
        for await (const _c of stream) {
          /* drain */
        }
      } finally {
        b.fake.usageText = undefined;
      }
    }
    await settled(b, 'a-huge');
    const [clamped, estimated] = (await b.events('a-huge')).slice(before);
    expect(clamped).toMatchObject({ stream: true, outputTokens: 100, usageClamped: true, usageEstimated: false });
    expect(clamped?.inputTokens).toBeLessThan(200);
    expect(estimated).toMatchObject({ stream: true, usageClamped: false, usageEstimated: true });
    expect(estimated?.costNano).toBeGreaterThan(0);
  });

  it('never serves for free: missing, null, negative, string, fractional and non-finite usage is estimated on every endpoint', async () => {
    const bad: Array<[string, string, string]> = [
      ['missing', 'absent', 'absent'],
      ['null', 'null', 'null'],
      ['negative', '-5', '-5'],
      ['a string', '"12"', '"7"'],
      ['fractional', '0.5', '0.25'],
      ['non-finite', '1e999', '-1e999'],
    ];
    const endpoints: Array<[string, (input: string, output: string) => string, (i: number) => Promise<unknown>]> = [
      [
        'chat',
        (x, y) => `{"prompt_tokens":${x},"completion_tokens":${y}}`,
        (i) => openai(b, 'bad', i).chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 }),
      ],
      [
        'responses',
        (x, y) => `{"input_tokens":${x},"output_tokens":${y}}`,
        (i) => openai(b, 'bad', i).responses.create({ model: 'gpt-r', input: 'hi', max_output_tokens: 50 }),
      ],
      [
        'messages',
        (x, y) => `{"input_tokens":${x},"output_tokens":${y}}`,
        (i) => anthropic(b, 'bad', i).messages.create({ model: 'claude-x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
      ],
      // The same through the translators: each client dialect served by the other wire format.
      [
        'chat on an Anthropic upstream',
        (x, y) => `{"input_tokens":${x},"output_tokens":${y}}`,
        (i) => openai(b, 'bad', i).chat.completions.create({ model: 'claude-x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 }),
      ],
      [
        'responses on a chat upstream',
        (x, y) => `{"prompt_tokens":${x},"completion_tokens":${y}}`,
        (i) => openai(b, 'bad', i).responses.create({ model: 'gpt-x', input: 'hi', max_output_tokens: 50 }),
      ],
      [
        'messages on an OpenAI upstream',
        (x, y) => `{"prompt_tokens":${x},"completion_tokens":${y}}`,
        (i) => anthropic(b, 'bad', i).messages.create({ model: 'gpt-x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
      ],
      [
        'embeddings',
        (x) => `{"prompt_tokens":${x},"total_tokens":${x}}`,
        (i) => openai(b, 'bad', i).embeddings.create({ model: 'embed-x', input: 'hello there', encoding_format: 'float' }),
      ],
    ];
    const estimatedBefore = await b.metric('svc_gateway_usage_estimated_total');
    let i = 0;
    for (const [, usage, call] of endpoints) {
      for (const [, x, y] of bad) {
        b.fake.usageText = x === 'absent' ? 'absent' : x === 'null' ? 'null' : usage(x, y);
        try {
          expect(await attempt(() => call(i++))).toMatchObject({ status: 200 });
        } finally {
          b.fake.usageText = undefined;
        }
      }
    }
    await settled(b, 'a-bad');
    const events = await b.events('a-bad');
    const free = events.filter((e) => e.costNano === 0 || e.usageEstimated !== true).map((e) => `${e.endpoint}: ${e.costNano} (estimated ${e.usageEstimated})`);
    console.log(`${events.length} calls with bad usage: ${free.length} free or unflagged (before the fix: every one charged 0)`);
    expect(events).toHaveLength(bad.length * endpoints.length);
    expect(free).toEqual([]);
    expect((await b.metric('svc_gateway_usage_estimated_total')) - estimatedBefore).toBe(bad.length * endpoints.length);
  });
});
