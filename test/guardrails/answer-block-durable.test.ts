// SVC_SETTLE_DURABILITY=postgres settles a call (its usage event committed in Postgres) before the caller has the end of
// its answer; the answer's guardrail checks still come first, so the row says what they decided: an answer a local or
// a remote (webhook) check blocked is recorded as 400 content_blocked with the block among its facts, charged what the
// upstream produced plus the price of the checks that answered, and it is in the ledger by the time the 400 arrives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJsonFake, type JsonFake } from '../fakes/guard-services/json-server.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { guardrail } from './cloud-helpers.ts';

let db: TestPostgres;
let gw: GatewayProcess;
let hook: JsonFake;
const k = apiKey('k', 'acme');
/** The webhook's price: 0.002 USD a call. */
const CHECK_NANO = 2_000_000;

beforeAll(async () => {
  db = await startPostgres('answer_block_durable', { own: true });
  hook = await startJsonFake((call) => {
    const texts = (call.body.texts as Array<{ text: string }>) ?? [];
    return { json: texts.some((t) => t.text.includes('secret plan')) ? { action: 'block', categories: ['plan'] } : { action: 'allow' } };
  });
  // The mock upstream answers "Hello from <model>. You said: <the prompt>": the prompt passes (the checks read only
  // answers), the answer that repeats it is blocked.
  const docs = [
    plan('builder', { tier: 2 }),
    account('acme', 'builder', { trialCreditUsd: 10 }),
    ...k.docs,
    route('mock-remote', [{ name: 'm', provider: 'mock' }]),
    route('mock-local', [{ name: 'm', provider: 'mock' }]),
    guardrail(
      'answers-remote',
      ['mock-remote'],
      [{ name: 'policy', action: 'block', webhook: { url: `${hook.url}/check` }, timeoutMs: 30_000, pricing: { perCallUsd: 0.002, per1kCharactersUsd: 0 } }],
      { stages: ['response'] },
    ),
    guardrail('answers-local', ['mock-local'], [{ name: 'codename', detector: 'words', words: ['secret plan'], action: 'block' }], { stages: ['response'] }),
  ];
  gw = await startGatewayProcess({ SVC_CONFIG: writeManifests(docs), DATABASE_URL: db.url, SVC_SETTLE_DURABILITY: 'postgres' });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await db?.stop();
  await hook?.close();
});

async function call(model: string, stream: boolean): Promise<{ status: number; text: string }> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'the secret plan' }], stream }),
  });
  return { status: res.status, text: await res.text() };
}

interface Row {
  status: number;
  error_code: string | null;
  guardrails: Array<Record<string, unknown>> | null;
  input_tokens: number;
  output_tokens: number;
  guard: string;
  cost: string;
}

/** The ledger's rows of a model, read the moment the caller has the answer (no waiting: they must be there). */
async function rows(model: string): Promise<Row[]> {
  const r = await db.pool.query<Row>(
    `SELECT status, error_code, guardrails, input_tokens, output_tokens, guardrail_cost_nano::bigint AS guard, cost_nano::bigint AS cost
       FROM usage_events WHERE requested_model = $1 ORDER BY created_at`,
    [model],
  );
  return r.rows;
}

/** 1.04 and 2.08 USD per million tokens (the route's price): nano-USD per token. */
const modelCost = (r: Row): number => r.input_tokens * 1040 + r.output_tokens * 2080;

describe('SVC_SETTLE_DURABILITY=postgres with answer-stage guardrails', () => {
  it('records a whole answer a remote check blocked as 400 content_blocked, its facts and the check priced', async () => {
    const r = await call('mock-remote', false);
    expect(r.status).toBe(400);
    expect(r.text).toContain('The answer was blocked by guardrail answers-remote');
    const [row, ...more] = await rows('mock-remote');
    expect(more).toEqual([]);
    expect(row).toMatchObject({ status: 400, error_code: 'content_blocked', guard: String(CHECK_NANO) });
    expect(row!.guardrails).toEqual([{ guardrail: 'answers-remote', check: 'policy', action: 'block', stage: 'response', kind: 'plan', count: 1 }]);
    expect(row!.output_tokens).toBeGreaterThan(0);
    expect(Number(row!.cost)).toBe(modelCost(row!) + CHECK_NANO);
  });

  it('records a whole answer a local check blocked as 400 content_blocked with its fact', async () => {
    const r = await call('mock-local', false);
    expect(r.status).toBe(400);
    expect(r.text).toContain('The answer was blocked by guardrail answers-local');
    const [row, ...more] = await rows('mock-local');
    expect(more).toEqual([]);
    expect(row).toMatchObject({ status: 400, error_code: 'content_blocked', guard: '0' });
    expect(row!.guardrails).toEqual([expect.objectContaining({ guardrail: 'answers-local', check: 'codename', action: 'block', stage: 'response', count: 1 })]);
    expect(Number(row!.cost)).toBe(modelCost(row!));
  });

  it('records a streamed answer a remote check blocked at its end the same way', async () => {
    const before = (await rows('mock-remote')).length;
    const r = await call('mock-remote', true);
    expect(r.status).toBe(200);
    expect(r.text).toContain('The answer was blocked by guardrail answers-remote');
    expect(r.text).not.toContain('[DONE]');
    const row = (await rows('mock-remote'))[before];
    expect(row).toMatchObject({ status: 400, error_code: 'content_blocked', guard: String(CHECK_NANO) });
    expect(row!.guardrails).toEqual([{ guardrail: 'answers-remote', check: 'policy', action: 'block', stage: 'response', kind: 'plan', count: 1 }]);
    expect(Number(row!.cost)).toBe(modelCost(row!) + CHECK_NANO);
  });
});
