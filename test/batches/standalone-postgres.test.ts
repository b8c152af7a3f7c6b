// The standalone gateway (node gateway/main.ts, as npm start runs it) with DATABASE_URL and REDIS_URL keeps files and
// batches in Postgres: a batch created by one process is finished after that process stopped, by the next one, and
// the files and the output are read back from it. Real processes, Redis and Postgres; the mock's batch API.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basics, route } from '../helpers/manifests.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

let redis: TestRedis;
let pg: TestPostgres;
const b = basics();
const config = (): string => writeManifests([...b.docs, route('mock-chat', [{ name: 'mock-a', provider: 'mock' }])]);
const procs: GatewayProcess[] = [];

async function gateway(file: string): Promise<GatewayProcess> {
  const p = await startGatewayProcess({
    SVC_CONFIG: file,
    REDIS_URL: redis.url,
    SVC_REDIS_PREFIX: redis.prefix,
    DATABASE_URL: pg.url,
    SVC_KEY_PEPPER: 'batch-store-test-pepper-shared-by-both',
    SVC_BATCH_POLL_SECONDS: '1',
    LOG_LEVEL: 'warn',
  });
  procs.push(p);
  return p;
}

beforeAll(async () => {
  [redis, pg] = await Promise.all([startRedis('batches-standalone-pg'), startPostgres('batches-standalone-pg')]);
}, 120_000);

afterAll(async () => {
  for (const p of procs) await p.stop();
  await redis?.stop();
  await pg?.stop();
});

describe('standalone with DATABASE_URL', () => {
  it('keeps files and batches in Postgres across a restart of the gateway', async () => {
    const file = config();
    const first = await gateway(file);
    const client = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
    const text = ['a', 'b'].map((w) =>
      JSON.stringify({
        custom_id: w,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'mock-chat', messages: [{ role: 'user', content: w }], max_tokens: 8 },
      }),
    );
    const input = await client.files.create({ file: await toFile(Buffer.from(text.join('\n')), 'in.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect((await pg.pool.query('SELECT 1 FROM batch_records WHERE id = $1', [batch.id])).rowCount).toBe(1);
    expect(await first.stop()).toBe(0);

    const second = await gateway(file);
    const again = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
    await until(async () => (await again.batches.retrieve(batch.id)).status === 'completed', 30_000, 'completed after the restart');
    const done = await again.batches.retrieve(batch.id);
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const output = await (await again.files.content(done.output_file_id ?? '')).text();
    expect(output.trim().split('\n')).toHaveLength(2);
    expect(await (await again.files.content(input.id)).text()).toBe(text.join('\n'));
    expect(second.output()).not.toMatch(/Postgres error/);
    // Each line is a usage event marked as a batch line, and the daily rollup counts them apart with what they cost.
    await until(async () => (await pg.pool.query('SELECT 1 FROM usage_events WHERE batch')).rowCount === 2, 30_000, 'the lines exported');
    const events = await pg.pool.query<{ cost: string }>('SELECT sum(cost_nano)::text AS cost FROM usage_events WHERE batch');
    const daily = await pg.pool.query<{ n: string; cost: string }>(
      `SELECT sum(batch_requests)::text AS n, sum(batch_cost_nano)::text AS cost FROM usage_daily WHERE kind = 'chat'`,
    );
    expect(daily.rows[0]).toEqual({ n: '2', cost: events.rows[0]?.cost });
    expect(Number(events.rows[0]?.cost)).toBeGreaterThan(0);
  }, 120_000);
});
