// node test/bench/usage-postgres.ts [--rows N]: the usage schema at volume, on a throwaway Postgres cluster:
// write throughput of the exporter's writer, bytes per row (heap and indexes), rollup size, and the dashboards'
// queries, with the extrapolation to a year at 100 requests/s printed beside.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { UsageEvent } from '../../gateway/usage/event.ts';
import { migrate } from '../../gateway/usage/postgres/migrate.ts';
import { createPool } from '../../gateway/usage/postgres/pool.ts';
import { QUERIES } from '../../gateway/usage/postgres/queries.ts';
import { UsageWriter } from '../../gateway/usage/postgres/writer.ts';
import { startPostgres } from '../helpers/postgres.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '300000' }, batch: { type: 'string', default: '500' } } });
const ROWS = Number(values.rows);
const BATCH = Number(values.batch);
const MONTH_START = Date.parse('2031-03-01T00:00:00Z');
const SPAN_MS = 30 * 86_400_000;
const MODELS = ['gpt-x', 'gpt-mini', 'claude-y', 'small', 'embed'];
const TASKS = ['summarize', 'translate', 'classify', 'chat', 'extract', 'review', 'plan', 'search', 'code', null];

function event(i: number): UsageEvent {
  const account = `acct-${i % 50}`;
  const input = 50 + (i % 900);
  const output = 10 + (i % 300);
  const cost = input * 1040 + output * 2080;
  return {
    eventId: randomUUID(),
    createdAt: new Date(MONTH_START + Math.floor((i / ROWS) * SPAN_MS)).toISOString(),
    account,
    apiKey: `${account}-key-${i % 4}`,
    taskType: TASKS[i % TASKS.length] ?? null,
    endpoint: 'chat.completions',
    requestedModel: MODELS[i % MODELS.length] as string,
    servedModel: MODELS[(i + (i % 20 === 0 ? 1 : 0)) % MODELS.length] as string,
    upstream: 'primary',
    fallback: i % 20 === 0,
    fallbackReason: i % 20 === 0 ? 'upstream_5xx' : null,
    status: i % 50 === 0 ? 502 : 200,
    errorCode: i % 50 === 0 ? 'upstream_error' : null,
    stream: i % 2 === 0,
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costNano: cost,
    feeNano: Math.floor((cost * 4) / 104),
    latencyMs: 200 + (i % 3000),
    ttftMs: 80 + (i % 500),
  };
}

async function timed<T>(op: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const r = await op();
  return [r, performance.now() - t0];
}

const db = await startPostgres('bench_usage', { own: true });
const pool = createPool(db.url);
try {
  await migrate(pool);
  const writer = new UsageWriter(pool);
  const [, writeMs] = await timed(async () => {
    for (let i = 0; i < ROWS; i += BATCH) {
      const rows = [];
      for (let j = i; j < Math.min(ROWS, i + BATCH); j++) rows.push({ source: 'bench', entryId: String(j), event: event(j) });
      await writer.write(rows);
    }
  });
  await pool.query('VACUUM ANALYZE usage_events, usage_daily');
  const size = (
    await pool.query<{ heap: string; idx: string; daily: string; daily_rows: string }>(`
    SELECT sum(pg_table_size(inhrelid))::bigint AS heap, sum(pg_indexes_size(inhrelid))::bigint AS idx,
           pg_total_relation_size('usage_daily')::bigint AS daily, (SELECT count(*) FROM usage_daily)::bigint AS daily_rows
    FROM pg_inherits WHERE inhparent = 'usage_events'::regclass`)
  ).rows[0];
  const heap = Number(size?.heap) / ROWS;
  const idx = Number(size?.idx) / ROWS;
  const year = 100 * 86_400 * 365;
  const q = async (sql: string, params: unknown[]): Promise<number> => (await timed(() => pool.query(sql, params)))[1];
  const monthKeys = await q(QUERIES['spend-by-key'], ['2031-03-01', '2031-03-31']);
  const monthTasks = await q(QUERIES['spend-by-task'], ['2031-03-01', '2031-03-31']);
  const drill = await q(
    'SELECT created_at, requested_model, status, cost_usd FROM usage_events WHERE account = $1 AND api_key = $2 AND created_at >= $3 AND created_at < $4 ORDER BY created_at DESC LIMIT 100',
    ['acct-7', 'acct-7-key-3', '2031-03-10', '2031-03-11'],
  );
  const dayScan = await q('SELECT count(*), sum(cost_nano) FROM usage_events WHERE created_at >= $1 AND created_at < $2', [
    '2031-03-10T00:00:00Z',
    '2031-03-10T01:00:00Z',
  ]);
  const lines = [
    `usage schema at ${ROWS.toLocaleString()} rows (one month, 50 accounts x 4 keys, 10 tasks, 5 models), batches of ${BATCH}:`,
    `  write throughput        ${Math.round(ROWS / (writeMs / 1000)).toLocaleString()} rows/s (events + rollup, one transaction per batch; 100 req/s needs 100)`,
    `  bytes per row           heap ${heap.toFixed(0)}, indexes ${idx.toFixed(0)} (PK ${'(event_id, created_at)'}, btree (account, api_key, created_at), BRIN created_at)`,
    `  a year at 100 req/s     ${(year / 1e9).toFixed(2)} billion rows: ~${((heap * year) / 1e12).toFixed(2)} TB heap + ~${((idx * year) / 1e12).toFixed(2)} TB indexes, ~${(((heap + idx) * year) / 12 / 1e9).toFixed(0)} GB per monthly partition`,
    `  rollup                  ${Number(size?.daily_rows).toLocaleString()} rows, ${(Number(size?.daily) / 1e6).toFixed(1)} MB for the month (grows with keys x tasks x models x days, not with calls)`,
    `  spend by key, month     ${monthKeys.toFixed(1)} ms (rollup)`,
    `  spend by task, month    ${monthTasks.toFixed(1)} ms (rollup)`,
    `  one key's calls, a day  ${drill.toFixed(1)} ms (btree)`,
    `  one hour's raw sums     ${dayScan.toFixed(1)} ms (BRIN)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await pool.end();
  await db.stop();
}
