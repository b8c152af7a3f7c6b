// The rebuild's read of the ledger (money-record.ts) hands on the recent event ids as it reads them, a FETCH at a
// time, each account's in order: the process never holds a busy account's ids at once, and none is lost, repeated or
// given to the wrong account. Real Postgres.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../../../test/helpers/postgres.ts';
import { migrate } from './migrate.ts';
import { readMoneyRecords } from './money-record.ts';

let pg: TestPostgres;

beforeAll(async () => {
  pg = await startPostgres('money-record');
  await migrate(pg.pool);
  await pg.pool.query('SELECT usage_ensure_partition(now())');
  await pg.pool.query("SELECT usage_ensure_partition(now() - interval '6 hours')");
  await pg.pool.query(`INSERT INTO ledger_credits (account, kind, credit_id, amount_nano) VALUES ('acme', 'trial', '', 1000), ('beta', 'trial', '', 2000)`);
  // acme 9 recent events, beta 3, gamma 2 (gamma has no credits: its record is blank), one of acme's too old to count.
  await pg.pool.query(
    `INSERT INTO usage_events (event_id, created_at, account, api_key, endpoint, requested_model, fallback, status, stream,
       input_tokens, output_tokens, cost_nano, fee_nano, latency_ms)
     SELECT gen_random_uuid(), now() - make_interval(secs => n), a, 'k', 'chat.completions', 'm', false, 200, false, 1, 1, 0, 0, 1
     FROM (VALUES ('acme', 9), ('beta', 3), ('gamma', 2)) AS v(a, c), generate_series(1, c) n`,
  );
  await pg.pool.query(
    `INSERT INTO usage_events (event_id, created_at, exported_at, account, api_key, endpoint, requested_model, fallback, status, stream,
       input_tokens, output_tokens, cost_nano, fee_nano, latency_ms)
     VALUES (gen_random_uuid(), now() - interval '6 hours', now() - interval '6 hours', 'acme', 'k', 'chat.completions', 'm', false, 200, false, 1, 1, 0, 0, 1)`,
  );
});

afterAll(async () => {
  await pg?.stop();
});

describe("the ledger's recent event ids, read for a rebuild", () => {
  for (const fetchRows of [1, 4, 5000]) {
    it(`go on in slices of at most ${fetchRows}, each account's in order, every recent id once`, async () => {
      const slices: Array<{ account: string; n: number }> = [];
      const got = new Map<string, string[]>();
      let inSink = 0;
      let most = 0;
      const records = await readMoneyRecords(
        pg.pool,
        '2026-11',
        async (account, ids) => {
          most = Math.max(most, ++inSink);
          slices.push({ account, n: ids.length });
          got.set(account, [...(got.get(account) ?? []), ...ids.map(([id]) => id)]);
          await new Promise((r) => setTimeout(r, 1));
          inSink--;
        },
        fetchRows,
      );
      const want = await pg.pool.query<{ account: string; id: string }>(
        `SELECT account, event_id::text AS id FROM usage_events WHERE created_at > now() - interval '1 hour' ORDER BY account, created_at`,
      );
      const byAccount = new Map<string, string[]>();
      for (const r of want.rows) byAccount.set(r.account, [...(byAccount.get(r.account) ?? []), r.id]);
      expect(got).toEqual(byAccount);
      expect(Math.max(...slices.map((s) => s.n))).toBeLessThanOrEqual(fetchRows);
      // One FETCH's accounts may be handed on together; never more than one FETCH's worth.
      expect(most).toBeLessThanOrEqual(Math.min(3, fetchRows));
      expect(slices.length).toBe(fetchRows === 1 ? 14 : fetchRows === 4 ? 5 : 3);
      expect(records.map((r) => [r.account, r.creditedNano])).toEqual([
        ['acme', 1000],
        ['beta', 2000],
        ['gamma', 0],
      ]);
    });
  }

  it('a sink that fails fails the read (the rebuild is retried) and leaves no transaction open', async () => {
    await expect(
      readMoneyRecords(pg.pool, '2026-11', async () => {
        throw new Error('redis went away');
      }),
    ).rejects.toThrow('redis went away');
    const open = await pg.pool.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
    );
    expect(open.rows[0]?.n).toBe('0');
  });
});
