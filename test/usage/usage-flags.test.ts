// The usage row says when the charged usage is not the upstream's report (README: Money): usage_estimated when the
// upstream reported none, usage_clamped when it reported more than the request could use. A standalone gateway with
// DATABASE_URL writes the rows; a fake upstream sends the reports.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUsageFake, type UsageFake } from '../fakes/usage-upstream.ts';
import { waitFor } from '../helpers/exporter.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

let fake: UsageFake;
let db: TestPostgres;
let gw: GatewayProcess;
const k = apiKey('k', 'acme');

beforeAll(async () => {
  fake = await startUsageFake();
  db = await startPostgres('usage_flags', { own: true });
  const docs = [
    plan('builder', { tier: 2 }),
    account('acme', 'builder', { trialCreditUsd: 10 }),
    ...k.docs,
    route('gpt-x', [{ name: 'fake', provider: 'openai', baseUrl: fake.baseUrl }], { pricing: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } }),
  ];
  gw = await startGatewayProcess({ SVC_CONFIG: writeManifests(docs), DATABASE_URL: db.url });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([db?.stop(), fake?.close()]);
});

describe('usage_events flags', () => {
  it('records an estimated and a clamped charge as such, and an honest one as neither', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: k.key, maxRetries: 0 });
    const call = async (usageText: UsageFake['usageText'], task: string): Promise<void> => {
      fake.usageText = usageText;
      try {
        await client.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20, metadata: { task_type: task } });
      } finally {
        fake.usageText = undefined;
      }
    };
    await call(undefined, 'honest');
    await call('absent', 'missing');
    await call('{"prompt_tokens":5000000,"completion_tokens":5000000}', 'huge');
    await waitFor(async () => (await db.pool.query('SELECT 1 FROM usage_events')).rowCount === 3, 30_000, '3 rows written');
    const rows = await db.pool.query(
      'SELECT task_type, usage_estimated, usage_clamped, output_tokens, cost_nano > 0 AS charged FROM usage_events ORDER BY task_type',
    );
    expect(rows.rows).toEqual([
      { task_type: 'honest', usage_estimated: false, usage_clamped: false, output_tokens: 20, charged: true },
      { task_type: 'huge', usage_estimated: false, usage_clamped: true, output_tokens: 20, charged: true },
      { task_type: 'missing', usage_estimated: true, usage_clamped: false, output_tokens: expect.any(Number) as number, charged: true },
    ]);
  });
});
