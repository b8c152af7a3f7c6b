// SLA credits: the rule as a table; a month below target on a real Redis (the status history in Redis as the
// operator's leader writes it, the billing ledger's exactly-once step) credited once however often and however many
// replicas run the job, copied to Postgres with source 'sla', and shown on that month's statement; the CLI does the
// same with --apply-sla.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slaCreditPercent, slaOutcome, runSla, SLA_RULE, uptimePercentOf } from '../../billing/sla/sla.ts';
import { PostgresStatementSource } from '../../billing/statements/statement-source.ts';
import { buildStatement, statementCsv, type UsageRow } from '../../billing/statements/statement.ts';
import { MemoryHistory } from '../../gateway/availability/history.ts';
import { PostgresHistory } from '../../gateway/availability/postgres-history.ts';
import { RedisHistory } from '../../gateway/availability/redis-history.ts';
import { MemoryBilling, RedisBilling } from '../../gateway/state/billing-ledger.ts';
import { recordBillingEntries } from '../../gateway/usage/postgres/billing-credits.ts';
import { migrate } from '../../gateway/usage/postgres/migrate.ts';
import { account, plan } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { ROOT } from '../helpers/process.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

const run = promisify(execFile);
const SLA = { target: 99.9 };
const BILLING = { invoiceHeader: 'Big Co', sla: SLA };
const row = (model: string, requests: number, costNano: number): UsageRow => ({
  model,
  apiKey: 'k',
  taskType: '',
  requests,
  inputTokens: 0,
  outputTokens: 0,
  costNano,
  feeNano: 0,
});

describe('the SLA tiers', () => {
  const tiers: Array<[number, number, number]> = [
    // uptime %, target %, credit %
    [100, 99.9, 0],
    [99.95, 99.9, 0],
    [99.9, 99.9, 0], // exactly at target: not below it
    [99.899999, 99.9, 10],
    [99.5, 99.9, 10],
    [99.0, 99.9, 10], // a boundary is not below it: 99.0% is the 10% tier
    [98.999999, 99.9, 25],
    [97, 99.9, 25],
    [95.0, 99.9, 25], // 95.0% is the 25% tier
    [94.999999, 99.9, 100],
    [50, 99.9, 100],
    [0, 99.9, 100],
    [99.95, 99.99, 10], // below a target above 99.9%: the first tier
    [99.5, 99.0, 0], // above a lower target: nothing
    [99.0, 99.0, 0], // at it: nothing
    [98.5, 99.0, 25],
    [94, 95.0, 100],
    [96, 95.0, 0],
  ];
  it.each(tiers)('uptime %s%% against target %s%%: %s%% credit', (uptime, target, credit) => {
    expect(slaCreditPercent(uptime, target)).toBe(credit);
  });

  it('compares uptime rounded to 1e-6 of a percent, so float noise never moves a boundary', () => {
    expect(uptimePercentOf(0.99)).toBe(99);
    expect(uptimePercentOf(1 - 0.01)).toBe(99);
    expect(uptimePercentOf(0.999)).toBe(99.9);
    expect(slaCreditPercent(uptimePercentOf(0.1 + 0.89), 99.9)).toBe(10);
    expect(slaCreditPercent(uptimePercentOf(0.95), 99.9)).toBe(25);
  });
});

describe('the SLA rule', () => {
  const table: Array<[string, UsageRow[], Record<string, number | null>, number | null, number]> = [
    // what, usage, uptime per model, weighted uptime, credit
    ['all up', [row('a', 100, 1_000)], { a: 1 }, 1, 0],
    ['exactly at target', [row('a', 100, 1_000)], { a: 0.999 }, 0.999, 0],
    [
      'one model down, weighted 99.85%: 10% of its spend',
      [row('a', 1000, 5_000_000_000), row('b', 10, 333_333_333)],
      { a: 0.9995, b: 0.9 },
      (1000 * 0.9995 + 10 * 0.9) / 1010,
      33_333_333,
    ],
    ['one model down, but weighted above target: nothing', [row('a', 100_000, 5_000), row('b', 1, 1_000)], { a: 1, b: 0.95 }, (100_000 + 0.95) / 100_001, 0],
    ['weighted 98.8%: 25% of the spend on the models below target', [row('a', 50, 1_000), row('b', 50, 2_001)], { a: 0.999, b: 0.977 }, 0.988, 500],
    ['weighted exactly 99.0%: the 10% tier', [row('a', 1, 1_000), row('b', 1, 7_000)], { a: 1, b: 0.98 }, 0.99, 700],
    ['weighted exactly 95.0%: the 25% tier', [row('a', 1, 1_000)], { a: 0.95 }, 0.95, 250],
    ['weighted below 95.0%: 100%', [row('a', 1, 1_000), row('b', 1, 3)], { a: 0.9, b: 0.99999 }, (0.9 + 0.99999) / 2, 1_000],
    ['a model never observed is left out', [row('a', 10, 1_000), row('x', 10, 9_999)], { a: 0.5, x: null }, 0.5, 1_000],
    ['nothing observed: no uptime, no credit', [row('x', 10, 1_000)], { x: null }, null, 0],
    ['no usage', [], {}, null, 0],
  ];
  it.each(table)('%s', (_what, usage, up, uptime, credit) => {
    const o = slaOutcome('2026-11', SLA, usage, (m) => up[m] ?? null);
    if (uptime === null) expect(o.uptime).toBeNull();
    else expect(o.uptime).toBeCloseTo(uptime, 12);
    expect(o.creditNano).toBe(credit);
  });

  it('is stated in words', () => {
    expect(SLA_RULE).toContain('weighted by its calls');
    expect(SLA_RULE).toContain('sla-YYYY-MM');
    expect(SLA_RULE).toContain('below 99.9% 10%, below 99.0% 25%, below 95.0% 100%');
  });
});

let pg: TestPostgres;
let redis: TestRedis;
const NOV_START = Date.UTC(2026, 10, 1);
const NOV_END = Date.UTC(2026, 11, 1);
const HOUR = 3_600_000;

beforeAll(async () => {
  [pg, redis] = await Promise.all([startPostgres('billing-sla'), startRedis('billing-sla')]);
  await migrate(pg.pool);
  // November for account big: mock-large served 900 calls (9.000000009 USD), mock-mini 100 calls (1 USD).
  for (const [acct, model, req, cost] of [
    ['big', 'mock-large', 900, 9_000_000_009],
    ['big', 'mock-mini', 100, 1_000_000_000],
    ['small', 'mock-large', 5, 50],
  ] as const) {
    await pg.pool.query(
      `INSERT INTO usage_daily (day, account, api_key, task_type, requested_model, served_model, fallback_reason, requests,
      errors, fallbacks, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_nano, fee_nano, latency_ms_sum)
      VALUES ('2026-11-10', $1, 'k', '', $2, $2, '', $3, 0, 0, 0, 0, 0, 0, $4, 0, 0)`,
      [acct, model, req, cost],
    );
  }
  // The status history in Redis: mock-large in major outage for 36 hours of November (95% up), mock-mini always up.
  const h = new RedisHistory(redis.client, redis.prefix);
  await h.addRound({ model: 'mock-large', at: NOV_START, intervalMs: 10 * 24 * HOUR, state: 'operational', probes: [] });
  await h.addRound({ model: 'mock-large', at: NOV_START + 10 * 24 * HOUR, intervalMs: 36 * HOUR, state: 'major_outage', probes: [] });
  await h.addRound({ model: 'mock-large', at: NOV_START + 10 * 24 * HOUR + 36 * HOUR, intervalMs: NOV_END - NOV_START, state: 'operational', probes: [] });
  await h.addRound({ model: 'mock-mini', at: NOV_START, intervalMs: NOV_END - NOV_START, state: 'operational', probes: [] });
}, 120_000);

afterAll(async () => {
  await Promise.all([pg?.stop(), redis?.stop()]);
});

describe('a month below target', () => {
  it('credits once per account and month, on every replica and every retry, and the statement shows it', async () => {
    const source = new PostgresStatementSource(pg.pool);
    const history = new RedisHistory(redis.client, redis.prefix);
    // Not before the month has ended.
    expect(await runSla({ source, history, ledger: new RedisBilling(redis.client, redis.prefix) }, 'big', BILLING, '2026-11', NOV_END - 1)).toBeNull();
    // Three replicas at once, then again.
    const replicas = [0, 1, 2].map(() => new RedisBilling(redis.client, redis.prefix));
    const first = await Promise.all(replicas.map((ledger) => runSla({ source, history, ledger }, 'big', BILLING, '2026-11', NOV_END + HOUR)));
    const again = await runSla({ source, history, ledger: replicas[0] as RedisBilling }, 'big', BILLING, '2026-11', NOV_END + 2 * HOUR);
    const o = first[0]?.outcome;
    expect(o?.models.map((m) => [m.model, m.uptime])).toEqual([
      ['mock-large', 1 - 36 / (30 * 24)],
      ['mock-mini', 1],
    ]);
    expect(o?.uptime).toBeCloseTo((900 * 0.95 + 100) / 1000, 12);
    expect(o?.creditPercent).toBe(25); // 95.5%: below 99.0%, not below 95.0%
    expect(o?.creditNano).toBe(2_250_000_002); // 25% of 9.000000009, floored to the nano-USD
    expect(first.map((r) => r?.result?.verdict).sort()).toEqual(['applied', 'duplicate-event', 'duplicate-event']);
    expect(again?.result?.verdict).toBe('duplicate-event');
    const entries = await replicas[1]?.entries('big');
    expect(entries).toEqual([{ kind: 'sla', reference: 'sla-2026-11', at: NOV_END - 1, eventId: 'sla-2026-11', deltaNano: 2_250_000_002 }]);
    expect(await redis.client.hget(`${redis.prefix}:{a:big}:acct`, 'credited')).toBe('2250000002');
    // Copied to Postgres twice: one row, source sla; on November's statement.
    await recordBillingEntries(pg.pool, 'big', entries ?? []);
    await recordBillingEntries(pg.pool, 'big', entries ?? []);
    const rows = await pg.pool.query('SELECT kind, source, amount_nano::text FROM ledger_credits WHERE account = $1', ['big']);
    expect(rows.rows).toEqual([{ kind: 'sla', source: 'sla', amount_nano: '2250000002' }]);
    const s = buildStatement('big', '2026-11', BILLING, await source.month('big', '2026-11'));
    expect(s.credits).toEqual([{ at: '2026-11-30T23:59:59Z', kind: 'sla', reference: 'sla-2026-11', amountNano: 2_250_000_002 }]);
    expect(s.closingNano).toBe(2_250_000_002 - 10_000_000_009);
    expect(statementCsv(s)).toContain('credit,2026-11-30,SLA credit sla-2026-11,,,,,,,2250000002,2.250000002,2.25');
    // The statement states the formula.
    expect(statementCsv(s)).toContain(SLA_RULE);
    expect(statementCsv(s)).toContain('SLA: 99.9% monthly uptime');
  });

  it('credits nothing to an account without an SLA, or one whose models were up', async () => {
    const source = new PostgresStatementSource(pg.pool);
    const ledger = new MemoryBilling({ adjustCredited: () => {} });
    const history = new MemoryHistory();
    await history.addRound({ model: 'mock-large', at: NOV_START, intervalMs: NOV_END - NOV_START, state: 'operational', probes: [] });
    expect(await runSla({ source, history, ledger }, 'small', { invoiceHeader: 'Small' }, '2026-11', NOV_END)).toBeNull();
    const r = await runSla({ source, history, ledger }, 'small', BILLING, '2026-11', NOV_END);
    expect(r?.outcome.creditNano).toBe(0);
    expect(r?.result).toBeNull();
    expect(await ledger.entries('small')).toEqual([]);
  });

  it('npm run statement -- --apply-sla applies it once and prints the statement with it', async () => {
    // October (a month that has ended on any clock running this): mock-old 80% up, 4 calls for 1,000 nano-USD.
    const OCT = Date.UTC(2026, 9, 1);
    await pg.pool.query(`INSERT INTO usage_daily (day, account, api_key, task_type, requested_model, served_model, fallback_reason, requests,
      errors, fallbacks, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_nano, fee_nano, latency_ms_sum)
      VALUES ('2026-10-20', 'small', 'k', '', 'mock-old', 'mock-old', '', 4, 0, 0, 0, 0, 0, 0, 1000, 0, 0)`);
    const h = new RedisHistory(redis.client, redis.prefix);
    await h.addRound({ model: 'mock-old', at: OCT, intervalMs: 31 * 24 * HOUR * 0.8, state: 'operational', probes: [] });
    await h.addRound({ model: 'mock-old', at: OCT + 31 * 24 * HOUR * 0.8, intervalMs: 31 * 24 * HOUR * 0.2, state: 'major_outage', probes: [] });
    const dir = mkdtempSync(join(tmpdir(), 'svc-sla-cli-'));
    writeFileSync(
      join(dir, 'config.yaml'),
      [plan('p', { tier: 0 }), account('small', 'p', { billing: { invoiceHeader: 'Small Co', sla: { target: 99.9 } } } as never)]
        .map((d) => stringify(d))
        .join('---\n'),
    );
    const env = { ...process.env, DATABASE_URL: pg.url, REDIS_URL: redis.url, SVC_REDIS_PREFIX: redis.prefix };
    const args = [
      'billing/statement-main.ts',
      '--account',
      'small',
      '--month',
      '2026-10',
      '--format',
      'csv',
      '--config',
      join(dir, 'config.yaml'),
      '--apply-sla',
    ];
    const a = await run(process.execPath, args, { cwd: ROOT, env });
    const b = await run(process.execPath, args, { cwd: ROOT, env });
    expect(a.stderr).toMatch(/SLA 2026-10: uptime 80\.000%, target 99\.9%, credit 1000 nano-USD, applied/);
    expect(b.stderr).toContain('duplicate-event');
    expect(b.stdout).toBe(a.stdout);
    expect(a.stdout).toContain('credit,2026-10-31,SLA credit sla-2026-10,,,,,,,1000,0.000001000,0.00');
    expect(a.stdout).toContain('closing,2026-10-31,Closing balance,,,,,,,0,0.000000000,0.00');
  });

  it('--history postgres reads the probe_results npm start keeps with DATABASE_URL', async () => {
    // September for account pgacct: mock-pg probed every 6 hours, 30 of its 120 rounds in major outage (75% up).
    const SEP = Date.UTC(2026, 8, 1);
    const h = new PostgresHistory(pg.pool);
    for (let i = 0; i < 120; i++) {
      const at = SEP + i * 6 * HOUR;
      await h.addRound({
        model: 'mock-pg',
        at,
        intervalMs: 6 * HOUR,
        state: i < 30 ? 'major_outage' : 'operational',
        probes: [{ model: 'mock-pg', target: 't', at, ok: i >= 30, latencyMs: 10, status: i < 30 ? 503 : 200, message: '', costNano: 0 }],
      });
    }
    await pg.pool.query(`INSERT INTO usage_daily (day, account, api_key, task_type, requested_model, served_model, fallback_reason, requests,
      errors, fallbacks, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_nano, fee_nano, latency_ms_sum)
      VALUES ('2026-09-20', 'pgacct', 'k', '', 'mock-pg', 'mock-pg', '', 3, 0, 0, 0, 0, 0, 0, 2000, 0, 0)`);
    const dir = mkdtempSync(join(tmpdir(), 'svc-sla-pg-'));
    writeFileSync(
      join(dir, 'config.yaml'),
      [plan('p', { tier: 0 }), account('pgacct', 'p', { billing: { invoiceHeader: 'Pg Co', sla: { target: 99 } } } as never)]
        .map((d) => stringify(d))
        .join('---\n'),
    );
    const env = { ...process.env, DATABASE_URL: pg.url, REDIS_URL: redis.url, SVC_REDIS_PREFIX: redis.prefix };
    const r = await run(
      process.execPath,
      [
        'billing/statement-main.ts',
        '--account',
        'pgacct',
        '--month',
        '2026-09',
        '--format',
        'csv',
        '--config',
        join(dir, 'config.yaml'),
        '--apply-sla',
        '--history',
        'postgres',
      ],
      { cwd: ROOT, env },
    );
    expect(r.stderr).toMatch(/SLA 2026-09: uptime 75\.000%, target 99%, credit 2000 nano-USD, applied/);
    expect(r.stdout).toContain('SLA credit sla-2026-09,,,,,,,2000,');
  });
});
