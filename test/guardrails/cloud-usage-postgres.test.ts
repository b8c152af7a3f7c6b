// A remote guardrail check's price reaches the record: a standalone gateway with DATABASE_URL writes the usage row of
// a call a priced webhook check passed with guardrail_cost_nano (its own column, part of cost_nano); a call the
// webhook blocked is recorded (status 400) and costs nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJsonFake, type JsonFake } from '../fakes/guard-services/json-server.ts';
import { waitFor } from '../helpers/exporter.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { guardrail } from './cloud-helpers.ts';

let db: TestPostgres;
let gw: GatewayProcess;
let hook: JsonFake;
const k = apiKey('k', 'acme');

beforeAll(async () => {
  db = await startPostgres('usage_guardrail_cost', { own: true });
  hook = await startJsonFake((call) => {
    const texts = (call.body.texts as Array<{ text: string }>) ?? [];
    return { json: texts.some((t) => t.text.includes('secret plan')) ? { action: 'block', categories: ['plan'] } : { action: 'allow' } };
  });
  const docs = [
    plan('builder', { tier: 2 }),
    account('acme', 'builder', { trialCreditUsd: 10 }),
    ...k.docs,
    route('mock-guarded', [{ name: 'm', provider: 'mock' }]),
    guardrail(
      'priced',
      ['mock-guarded'],
      [{ action: 'block', webhook: { url: `${hook.url}/check` }, timeoutMs: 30_000, pricing: { perCallUsd: 0.002, per1kCharactersUsd: 0 } }],
    ),
  ];
  gw = await startGatewayProcess({ SVC_CONFIG: writeManifests(docs), DATABASE_URL: db.url });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await db?.stop();
  await hook?.close();
});

const call = (content: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-guarded', messages: [{ role: 'user', content }] }),
  });

describe('usage_events guardrail_cost_nano', () => {
  it("records a passed call's check price as its own column, inside cost_nano; a blocked call is recorded at cost 0", async () => {
    const blocked = await call('the secret plan');
    expect(blocked.status).toBe(400);
    const ok = await call('hello');
    expect(ok.status).toBe(200);
    await waitFor(async () => (await db.pool.query('SELECT 1 FROM usage_events')).rowCount === 2, 30_000, '2 rows written');
    const rows = await db.pool.query('SELECT status, guardrail_cost_nano::bigint AS guard, cost_nano::bigint AS cost FROM usage_events ORDER BY status');
    // The pass: two runs (the request and the answer), 0.002 USD each. The block: recorded, nothing charged.
    expect(rows.rows).toEqual([
      { status: 200, guard: '4000000', cost: expect.any(String) },
      { status: 400, guard: '0', cost: '0' },
    ]);
    expect(BigInt(rows.rows[0].cost)).toBeGreaterThanOrEqual(4_000_000n);
  });
});
