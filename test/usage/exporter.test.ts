// The exporter against a real Redis and a real Postgres, fed entries in the documented stream format.
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { accountKeys } from '../../gateway/state/redis-store.ts';
import { GROUP } from '../../gateway/usage/exporter/streams.ts';
import { exporterInProcess, rowCounts, waitFor, type InProcessExporter } from '../helpers/exporter.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sampleEvent, streamBatchFields, streamFields } from '../helpers/usage-events.ts';

let redis: TestRedis;
let pg: TestPostgres;
let r: Redis;
const running: InProcessExporter[] = [];

beforeAll(async () => {
  [redis, pg] = await Promise.all([startRedis('exporter'), startPostgres('exporter')]);
  r = redis.client;
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop()));
  const keys = await r.keys(`${redis.prefix}:*`);
  if (keys.length) await r.del(...keys);
  // Tables exist once an exporter ran; each test starts from empty ones.
  await pg.pool.query('TRUNCATE usage_events, usage_daily, usage_dead_letters, ledger_credits').catch(() => {});
});

afterAll(async () => {
  await Promise.all([redis?.stop(), pg?.stop()]);
});

async function exporter(opts: Record<string, number> = {}): Promise<InProcessExporter> {
  const e = await exporterInProcess(redis.url, pg.url, redis.prefix, opts);
  running.push(e);
  return e;
}

function stream(account: string): string {
  return accountKeys(redis.prefix, account).usage;
}

async function register(...accounts: string[]): Promise<void> {
  for (const a of accounts) await r.sadd(`${redis.prefix}:usage:streams`, stream(a));
}

async function append(account: string, n: number, over: Parameters<typeof sampleEvent>[0] = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await r.xadd(stream(account), '*', ...streamFields(sampleEvent({ account, ...over })))) as string);
  return ids;
}

describe('usage exporter', () => {
  it('writes every entry once, acknowledges after commit and trims what is committed', async () => {
    await register('acme', 'hobby');
    await append('acme', 700);
    await append('hobby', 40, { costNano: 1000, feeNano: 38 });
    const e = await exporter({ batchSize: 200 });
    await waitFor(async () => (await rowCounts(pg.pool)).rows === 740);
    await waitFor(async () => (await r.xlen(stream('acme'))) === 0 && (await r.xlen(stream('hobby'))) === 0, 5000, 'streams trimmed');
    expect(await rowCounts(pg.pool)).toEqual({ rows: 740, distinct: 740 });
    expect(await e.metric('svc_exporter_rows_written_total')).toBe(740);
    expect(await e.metric('svc_exporter_acked_total')).toBe(740);
    expect(await e.metric('svc_exporter_trimmed_entries_total')).toBe(740);
    expect(await e.metric('svc_exporter_dead_letters_total')).toBe(0);
    const cost = await pg.pool.query('SELECT account, sum(cost_nano)::bigint AS nano FROM usage_daily GROUP BY account ORDER BY account');
    expect(cost.rows).toEqual([
      { account: 'acme', nano: String(700 * 25_000) },
      { account: 'hobby', nano: '40000' },
    ]);
  });

  it('writes an event appended twice (a retried settle) once, and counts the duplicate', async () => {
    await register('acme');
    const ev = sampleEvent();
    await r.xadd(stream('acme'), '*', ...streamFields(ev));
    await r.xadd(stream('acme'), '*', ...streamFields(ev));
    const e = await exporter();
    await waitFor(async () => (await e.metric('svc_exporter_acked_total')) === 2);
    expect(await rowCounts(pg.pool)).toEqual({ rows: 1, distinct: 1 });
    expect(await e.metric('svc_exporter_duplicates_total')).toBe(1);
    const daily = await pg.pool.query('SELECT requests::int FROM usage_daily');
    expect(daily.rows).toEqual([{ requests: 1 }]);
  });

  it('writes each event of a several-event entry (a lease flush) once, parks a bad one alone, and skips one seen before', async () => {
    await register('acme');
    const [a, b, c] = [sampleEvent({ costNano: 100 }), sampleEvent({ costNano: 200 }), sampleEvent({ costNano: 400 })];
    await r.xadd(stream('acme'), '*', ...streamFields(a));
    // The second entry repeats a (written again), carries b and c, and one event Postgres must never see.
    await r.xadd(stream('acme'), '*', ...streamBatchFields([a, b, { ...sampleEvent(), inputTokens: -5 }, c]));
    const e = await exporter();
    await waitFor(async () => (await e.metric('svc_exporter_acked_total')) === 2);
    expect(await rowCounts(pg.pool)).toEqual({ rows: 3, distinct: 3 });
    const cost = await pg.pool.query('SELECT sum(cost_nano)::bigint AS nano FROM usage_events');
    expect(cost.rows).toEqual([{ nano: '700' }]);
    const dead = await pg.pool.query<{ entry_id: string; reason: string }>('SELECT entry_id, reason FROM usage_dead_letters');
    expect(dead.rows).toEqual([{ entry_id: expect.stringMatching(/^\d+-\d+\/2$/), reason: 'invalid_event' }]);
  });

  it('parks poison entries in usage_dead_letters, once, and exports the good ones around them', async () => {
    await register('acme');
    await append('acme', 3);
    await r.xadd(stream('acme'), '*', 'v', '1', 'event', '{not json');
    await r.xadd(stream('acme'), '*', 'v', '1', 'event', JSON.stringify({ ...sampleEvent(), inputTokens: -5 }));
    await r.xadd(stream('acme'), '*', 'v', '9', 'something', 'else');
    await append('acme', 3);
    const e = await exporter();
    await waitFor(async () => (await e.metric('svc_exporter_acked_total')) === 9);
    expect((await rowCounts(pg.pool)).rows).toBe(6);
    const dead = await pg.pool.query('SELECT reason, source FROM usage_dead_letters ORDER BY id');
    expect(dead.rows.map((d: { reason: string }) => d.reason).sort()).toEqual(['bad_format', 'invalid_event', 'invalid_json']);
    expect(await e.metric('svc_exporter_dead_letters_total')).toBe(3);
  });

  it('takes over the pending entries of a consumer that died, and never trims them before', async () => {
    await register('acme');
    const ids = await append('acme', 50);
    await r.xgroup('CREATE', stream('acme'), GROUP, '0', 'MKSTREAM');
    // A replica read 30 entries and died before committing them.
    await r.xreadgroup('GROUP', GROUP, 'dead-replica', 'COUNT', 30, 'STREAMS', stream('acme'), '>');
    const e = await exporter({ claimIdleMs: 3000 });
    await waitFor(async () => (await rowCounts(pg.pool)).rows === 20);
    // The 30 are still pending on the dead consumer: the stream keeps them.
    const first = await r.xrange(stream('acme'), '-', '+', 'COUNT', 1);
    expect(first[0]?.[0]).toBe(ids[0]);
    await waitFor(async () => (await rowCounts(pg.pool)).rows === 50);
    expect(await rowCounts(pg.pool)).toEqual({ rows: 50, distinct: 50 });
    expect(await e.metric('svc_exporter_entries_read_total')).toBe(50);
    await waitFor(async () => (await r.xlen(stream('acme'))) === 0, 5000, 'stream trimmed');
  });

  it('parks an entry delivered too many times (it keeps killing exporters)', async () => {
    await register('acme');
    const [id] = await append('acme', 1);
    await r.xgroup('CREATE', stream('acme'), GROUP, '0', 'MKSTREAM');
    await r.xreadgroup('GROUP', GROUP, 'crashed', 'COUNT', 1, 'STREAMS', stream('acme'), '>');
    await r.xclaim(stream('acme'), GROUP, 'crashed', 0, id as string, 'RETRYCOUNT', 10);
    const e = await exporter({ claimIdleMs: 0, maxDeliveries: 10 });
    await waitFor(async () => (await e.metric('svc_exporter_dead_letters_total')) === 1);
    const dead = await pg.pool.query('SELECT reason, entry_id FROM usage_dead_letters');
    expect(dead.rows).toEqual([{ reason: 'too_many_deliveries', entry_id: id }]);
    expect((await rowCounts(pg.pool)).rows).toBe(0);
  });

  it('runs as several replicas on the same streams without duplicates', async () => {
    await register('a1', 'a2', 'a3');
    const writes = Promise.all(['a1', 'a2', 'a3'].map((a) => append(a, 300)));
    const es = await Promise.all([exporter({ batchSize: 50 }), exporter({ batchSize: 50 }), exporter({ batchSize: 50 })]);
    await writes;
    await waitFor(async () => (await rowCounts(pg.pool)).rows === 900);
    expect(await rowCounts(pg.pool)).toEqual({ rows: 900, distinct: 900 });
    const written = await Promise.all(es.map((e) => e.metric('svc_exporter_rows_written_total')));
    expect(written.reduce((a, b) => a + b, 0)).toBe(900);
  });

  it('records the credits the store applied into the ledger, once', async () => {
    const snapshot = {
      schema: 1,
      version: 'v',
      plans: {},
      models: {},
      accounts: {
        acme: {
          name: 'acme',
          plan: 'p',
          trialCreditNano: 2_000_000_000,
          credits: [
            { id: 'c1', amountNano: 5_000_000_000 },
            { id: 'c2', amountNano: 7 },
          ],
        },
      },
    };
    await r.set(`${redis.prefix}:config:snapshot`, JSON.stringify(snapshot));
    const k = accountKeys(redis.prefix, 'acme');
    // The store granted a 1 USD trial when it first saw the account, and has applied c1 but not c2 yet.
    await r.hset(k.acct, 'trial', '1000000000');
    await r.sadd(k.credits, 'c1');
    await register('acme');
    await append('acme', 4);
    await exporter();
    await waitFor(async () => (await rowCounts(pg.pool)).rows === 4);
    await waitFor(async () => (await pg.pool.query('SELECT 1 FROM ledger_credits')).rowCount === 2);
    const ledger = await pg.pool.query('SELECT account, credited_nano::bigint, spent_nano::bigint, balance_nano::bigint FROM account_ledger');
    expect(ledger.rows).toEqual([{ account: 'acme', credited_nano: '6000000000', spent_nano: '100000', balance_nano: '5999900000' }]);
  });
});
