// The usage schema on a real Postgres: migrations under concurrency, monthly partitions, idempotent inserts, the
// rollup against the raw rows, poison rows parked, and the queries of docs/operations.md run as written.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, MigrationError, migrations } from '../../gateway/usage/postgres/migrate.ts';
import { monthsFrom } from '../../gateway/usage/postgres/partitions.ts';
import { createPool } from '../../gateway/usage/postgres/pool.ts';
import { QUERIES, type QueryName } from '../../gateway/usage/postgres/queries.ts';
import { UsageWriter, type Row } from '../../gateway/usage/postgres/writer.ts';
import { recordCredits } from '../../gateway/usage/postgres/credits.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { sampleEvent } from '../helpers/usage-events.ts';
import { docSql } from '../helpers/docs.ts';

let db: TestPostgres;
let pool: pg.Pool;
let writer: UsageWriter;

beforeAll(async () => {
  db = await startPostgres('schema');
  pool = createPool(db.url);
  writer = new UsageWriter(pool);
});

afterAll(async () => {
  await pool?.end();
  await db?.stop();
});

const row = (over: Parameters<typeof sampleEvent>[0] = {}): Row => {
  const event = sampleEvent(over);
  return { source: 'test', entryId: event.eventId, event };
};

/** The SQL block of docs/operations.md (Queries) between <!-- sql:NAME --> and <!-- /sql -->. */
function docsQuery(name: string): string {
  return docSql('docs/operations.md', name).trim();
}

describe('usage schema', () => {
  it('applies each migration once when several exporters start together', async () => {
    const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: db.url, max: 1 }));
    const applied = await Promise.all(pools.map((p) => migrate(p)));
    await Promise.all(pools.map((p) => p.end()));
    expect(applied.flat().sort()).toEqual(migrations().map((m) => `${String(m.version).padStart(3, '0')}_${m.name}`));
    expect(await migrate(pool)).toEqual([]);
    const r = await pool.query('SELECT count(*)::int AS n FROM usage_schema_migrations');
    expect(r.rows[0]).toEqual({ n: migrations().length });
  });

  it('refuses a migration edited after it was applied', async () => {
    const edited = migrations().map((m, i) => (i === 0 ? { ...m, checksum: 'changed' } : m));
    await expect(migrate(pool, edited)).rejects.toBeInstanceOf(MigrationError);
  });

  it('creates monthly partitions ahead and on demand, with their indexes', async () => {
    await writer.partitions.ahead();
    await writer.write([row({ createdAt: '2024-02-29T23:59:59.999Z' }), row({ createdAt: '2024-03-01T00:00:00.000Z' })]);
    const parts = await pool.query<{ name: string }>(
      "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'usage_events'::regclass ORDER BY 1",
    );
    const want = ['2024-02', '2024-03', ...monthsFrom(Date.now())].map((m) => `usage_events_${m.replace('-', '_')}`);
    expect(parts.rows.map((p) => p.name)).toEqual(expect.arrayContaining(want));
    const where = await pool.query<{ part: string }>(
      "SELECT tableoid::regclass::text AS part FROM usage_events WHERE created_at < '2024-04-01' ORDER BY created_at",
    );
    expect(where.rows.map((r) => r.part)).toEqual(['usage_events_2024_02', 'usage_events_2024_03']);
    const idx = await pool.query<{ def: string }>("SELECT indexdef AS def FROM pg_indexes WHERE tablename = 'usage_events_2024_02' ORDER BY 1");
    expect(idx.rows.map((r) => r.def).join('\n')).toMatch(
      /USING brin \(created_at\)[\s\S]*USING btree \(account, api_key, created_at\)|USING btree \(account, api_key, created_at\)[\s\S]*USING brin/,
    );
    expect(idx.rows.map((r) => r.def).join('\n')).toContain('(event_id, created_at)');
  });

  it('makes inserts idempotent by event id (and its admission time), across batches and inside one', async () => {
    const r1 = row();
    const first = await writer.write([r1, r1, row()]);
    const again = await writer.write([r1]);
    expect(first).toMatchObject({ inserted: 2, duplicates: 1 });
    expect(again).toMatchObject({ inserted: 0, duplicates: 1, insertedIds: [] });
    const n = await pool.query('SELECT count(*)::int AS n FROM usage_events WHERE event_id = $1', [r1.event.eventId]);
    expect(n.rows[0]).toEqual({ n: 1 });
  });

  it('records the hosted tools a call left out (dropped_tools), NULL when none', async () => {
    const dropped = row({ droppedTools: ['web_search', 'file_search'] });
    const plain = row();
    await writer.write([dropped, plain]);
    const r = await pool.query<{ event_id: string; dropped_tools: string | null }>(
      'SELECT event_id, dropped_tools FROM usage_events WHERE event_id = ANY($1)',
      [[dropped.event.eventId, plain.event.eventId]],
    );
    const by = new Map(r.rows.map((x) => [x.event_id, x.dropped_tools]));
    expect(by.get(dropped.event.eventId)).toBe('web_search,file_search');
    expect(by.get(plain.event.eventId)).toBeNull();
  });

  it('parks a row Postgres rejects and writes the rest of its batch', async () => {
    const good = Array.from({ length: 9 }, () => row());
    const bad = row({ inputTokens: 3_000_000_000 }); // past integer: 22003
    const r = await writer.write([...good.slice(0, 4), bad, ...good.slice(4)]);
    expect(r).toMatchObject({ inserted: 9, duplicates: 0, parked: ['rejected_by_postgres'] });
    expect(r.insertedIds.sort()).toEqual(good.map((g) => g.event.eventId).sort()); // the rows new to the ledger, by id
    const dead = await pool.query('SELECT reason, event_id, detail FROM usage_dead_letters WHERE entry_id = $1', [bad.entryId]);
    expect(dead.rows[0]).toMatchObject({ reason: 'rejected_by_postgres', event_id: bad.event.eventId });
    expect(String(dead.rows[0]?.detail)).toContain('22003');
  });

  it('keeps the daily rollup equal to the raw events', async () => {
    const raw = await pool.query(
      'SELECT count(*)::bigint AS requests, sum(input_tokens)::bigint AS input, sum(cost_nano)::bigint AS cost, sum(fee_nano)::bigint AS fee FROM usage_events',
    );
    const roll = await pool.query(
      'SELECT sum(requests)::bigint AS requests, sum(input_tokens)::bigint AS input, sum(cost_nano)::bigint AS cost, sum(fee_nano)::bigint AS fee FROM usage_daily',
    );
    expect(roll.rows[0]).toEqual(raw.rows[0]);
  });
});

describe('the queries of docs/operations.md', () => {
  const day = '2031-05-17';
  const at = `${day}T12:00:00Z`;

  beforeAll(async () => {
    const calls: Array<[string, string, string | null, string, number]> = [
      // key, account, task, served model, cost (nano-USD)
      ['ci', 'acme', 'summarize', 'gpt-x', 1_500_000],
      ['ci', 'acme', 'summarize', 'gpt-x', 2_500_000],
      ['ci', 'acme', 'translate', 'small', 400_000],
      ['web', 'acme', null, 'gpt-x', 7_000_000],
      ['bot', 'globex', 'summarize', 'small', 100_000],
    ];
    await writer.write(
      calls.map(([apiKey, account, taskType, servedModel, costNano], i) =>
        row({
          apiKey,
          account,
          taskType,
          servedModel,
          requestedModel: 'gpt-x',
          costNano,
          feeNano: Math.floor((costNano * 4) / 104),
          fallback: servedModel === 'small',
          fallbackReason: servedModel === 'small' ? 'upstream_5xx' : null,
          createdAt: at,
          inputTokens: 10 * (i + 1),
          outputTokens: i,
        }),
      ),
    );
    await recordCredits(pool, {
      accounts: { acme: { name: 'acme', plan: 'p', trialCreditNano: 1_000_000_000, credits: [{ id: 'po-7', amountNano: 9_000_000_000 }] } },
    });
  });

  it.each(Object.keys(QUERIES) as QueryName[])('%s is in docs/operations.md as the code has it', (name) => {
    expect(docsQuery(name)).toBe(QUERIES[name].trim());
  });

  const run = async (name: QueryName): Promise<Array<Record<string, unknown>>> => (await pool.query(docsQuery(name), [day, day])).rows;

  it('spend by key', async () => {
    expect((await run('spend-by-key')).map((r) => [r.account, r.api_key, r.requests, r.cost_usd])).toEqual([
      ['acme', 'web', '1', '0.007000000'],
      ['acme', 'ci', '3', '0.004400000'],
      ['globex', 'bot', '1', '0.000100000'],
    ]);
  });

  it('spend by model (the model that served)', async () => {
    expect((await run('spend-by-model')).map((r) => [r.model, r.requests, r.fallbacks, r.cost_usd])).toEqual([
      ['gpt-x', '3', '0', '0.011000000'],
      ['small', '2', '2', '0.000500000'],
    ]);
  });

  it('spend by task', async () => {
    expect((await run('spend-by-task')).map((r) => [r.account, r.task_type, r.requests, r.cost_usd])).toEqual([
      ['acme', '(none)', '1', '0.007000000'],
      ['acme', 'summarize', '2', '0.004000000'],
      ['acme', 'translate', '1', '0.000400000'],
      ['globex', 'summarize', '1', '0.000100000'],
    ]);
  });

  it('spend by month, fallback rate and balances', async () => {
    const month = await run('spend-by-month');
    expect(month.reduce((a, r) => a + Number(r.cost_usd), 0)).toBeCloseTo(0.0115, 9);
    expect(month.every((r) => String(r.month).startsWith('2031-05') || (r.month instanceof Date && r.month.getUTCMonth() === 4))).toBe(true);
    expect((await run('fallback-rate')).map((r) => [r.requested_model, r.requests, r.fallbacks, r.fallback_rate])).toEqual([['gpt-x', '5', '2', '0.4000']]);
    const balances = (await pool.query(docsQuery('balances'))).rows.find((r: { account: string }) => r.account === 'acme') as Record<string, string>;
    const spent = await pool.query<{ usd: string }>("SELECT (sum(cost_nano) / 1e9)::numeric(20, 9)::text AS usd FROM usage_events WHERE account = 'acme'");
    expect(balances.credited_usd).toBe('10.000000000');
    expect(balances.spent_usd).toBe(spent.rows[0]?.usd);
    expect(Number(balances.balance_usd)).toBeCloseTo(10 - Number(spent.rows[0]?.usd), 9);
  });
});
