// Exporters killed (docs/operations.md: Measured): exporter processes SIGKILLed mid-batch (before the commit, and after the commit before the
// acknowledgement) and under continuous load: their pending entries are taken over; no row missing or duplicated;
// tokens in Postgres equal what the fake upstreams served.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP } from '../../gateway/usage/exporter/streams.ts';
import { accountKeys } from '../../gateway/state/redis-store.ts';
import { startFakeUpstream } from '../fakes/upstream.ts';
import { exporterProcess, rowCounts, waitFor, type ExporterProcess } from '../helpers/exporter.ts';
import { startFleet, type Fleet } from '../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { metricSum, scrape } from '../helpers/prom.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { mixedTraffic, script, servedTokens, trafficManifests, type CallOutcome, type Upstreams } from '../helpers/usage-traffic.ts';

let redis: TestRedis;
let db: TestPostgres;
let u: Upstreams;
let fleet: Fleet;
let keys: ReturnType<typeof trafficManifests>['keys'];
const calls: CallOutcome[] = [];
const exporters: ExporterProcess[] = [];

beforeAll(async () => {
  const [primary, secondary, backup] = await Promise.all([startFakeUpstream('primary'), startFakeUpstream('secondary'), startFakeUpstream('backup')]);
  u = { primary, secondary, backup };
  script(u);
  [redis, db] = await Promise.all([startRedis('exporter-kill', { own: true }), startPostgres('exporter_kill')]);
  const m = trafficManifests(u);
  keys = m.keys;
  fleet = await startFleet(2, redis, m.docs);
}, 120_000);

afterAll(async () => {
  await Promise.all(exporters.map((e) => e.kill('SIGKILL')));
  await fleet?.stop();
  await Promise.all([redis?.stop(), db?.stop(), u?.primary.close(), u?.secondary.close(), u?.backup.close()]);
});

async function startExporterProcess(): Promise<ExporterProcess> {
  const e = exporterProcess({ REDIS_URL: redis.url, DATABASE_URL: db.url, SVC_REDIS_PREFIX: redis.prefix }, [
    '--claim-idle-ms',
    '1000',
    '--batch-size',
    '40',
    '--poll-ms',
    '20',
  ]);
  exporters.push(e);
  await e.url;
  return e;
}

async function traffic(n: number): Promise<void> {
  calls.push(...(await mixedTraffic(fleet.urls, keys, n)));
}

/** Pending entries per consumer, over every account's stream. */
async function pendingByConsumer(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const a of ['acme', 'globex']) {
    const raw = (await redis.client.xpending(accountKeys(redis.prefix, a).usage, GROUP)) as [
      number,
      string | null,
      string | null,
      Array<[string, string]> | null,
    ];
    for (const [c, n] of raw[3] ?? []) out[c] = (out[c] ?? 0) + Number(n);
  }
  return out;
}

/** Holds an exclusive lock on the rollup: an exporter's batch transaction then waits inside, before its commit. */
async function blockCommits(): Promise<pg.PoolClient> {
  const c = await db.pool.connect();
  await c.query('BEGIN');
  await c.query('LOCK TABLE usage_daily IN EXCLUSIVE MODE');
  return c;
}

async function exporterWaitingOnLock(): Promise<void> {
  await waitFor(
    async () => {
      const r = await db.pool.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'svc-gateway-usage' AND wait_event_type = 'Lock'");
      return (r.rowCount ?? 0) > 0;
    },
    20_000,
    'an exporter blocked inside its batch transaction',
  );
}

async function allExported(): Promise<{ rows: number; distinct: number }> {
  await waitFor(async () => (await rowCounts(db.pool)).rows >= calls.length, 60_000, `${calls.length} rows`);
  await new Promise((r) => setTimeout(r, 1500)); // room for a duplicate to appear
  return rowCounts(db.pool);
}

async function checkTokens(): Promise<void> {
  const t = await db.pool.query<{ input: string; output: string }>(
    'SELECT sum(input_tokens) AS input, sum(output_tokens) AS output FROM usage_events WHERE status = 200',
  );
  expect({ input: Number(t.rows[0]?.input), output: Number(t.rows[0]?.output) }).toEqual(servedTokens(u));
}

describe('exporter killed mid-batch', () => {
  it('before its commit: another replica takes the entries over', async () => {
    const a = await startExporterProcess();
    await traffic(60);
    await waitFor(async () => (await rowCounts(db.pool)).rows === calls.length, 30_000, 'first calls exported');
    const lock = await blockCommits();
    await traffic(60);
    await exporterWaitingOnLock();
    const pending = await pendingByConsumer();
    await a.kill('SIGKILL');
    await lock.query('ROLLBACK');
    lock.release();
    const b = await startExporterProcess();
    const { rows, distinct } = await allExported();
    console.log(
      `case 6 (SIGKILL before commit): pending on the killed exporter ${JSON.stringify(pending)}; rows ${rows} of ${calls.length}; missing ${calls.length - distinct}; duplicated ${rows - distinct}`,
    );
    expect(Object.values(pending).reduce((x, y) => x + y, 0)).toBeGreaterThan(0);
    expect(rows).toBe(calls.length);
    expect(distinct).toBe(rows);
    const claimed = metricSum(await scrape(await b.url), 'svc_exporter_entries_read_total', { source: 'claimed' });
    expect(claimed).toBeGreaterThan(0);
    await checkTokens();
    await b.kill('SIGKILL');
  });

  it('after its commit, before its acknowledgement: the redelivered entries are skipped as duplicates', async () => {
    const b = await startExporterProcess();
    await waitFor(async () => (await rowCounts(db.pool)).rows === calls.length, 30_000, 'caught up');
    const lock = await blockCommits();
    await traffic(40);
    await exporterWaitingOnLock();
    const before = (await rowCounts(db.pool)).rows;
    // Redis refuses writes (XACK among them) while the exporter commits.
    await redis.client.call('CLIENT', 'PAUSE', '60000', 'WRITE');
    await lock.query('ROLLBACK');
    lock.release();
    await waitFor(async () => (await rowCounts(db.pool)).rows > before, 10_000, 'batch committed');
    await b.kill('SIGKILL');
    await redis.client.call('CLIENT', 'UNPAUSE');
    const c = await startExporterProcess();
    // The rows are all there already; wait until the new replica has claimed and skipped the redelivered entries.
    const duplicates = async (): Promise<number> => metricSum(await scrape(await c.url), 'svc_exporter_duplicates_total');
    await waitFor(async () => (await duplicates()) > 0, 30_000, 'redelivered entries claimed and skipped');
    const { rows, distinct } = await allExported();
    const dup = await duplicates();
    console.log(
      `case 6 (SIGKILL after commit, before ack): redelivered and skipped ${dup}; rows ${rows} of ${calls.length}; missing ${calls.length - distinct}; duplicated ${rows - distinct}`,
    );
    expect(dup).toBeGreaterThan(0);
    expect(rows).toBe(calls.length);
    expect(distinct).toBe(rows);
    await checkTokens();
  });

  it('under continuous load, with replicas killed and restarted: nothing lost, nothing doubled', async () => {
    await startExporterProcess();
    const load = traffic(400);
    for (let k = 0; k < 4; k++) {
      await new Promise((r) => setTimeout(r, 400));
      const victim = exporters.filter((e) => e.child.exitCode === null && e.child.signalCode === null)[0];
      await victim?.kill('SIGKILL');
      await startExporterProcess();
    }
    await load;
    const { rows, distinct } = await allExported();
    console.log(`case 6 (4 SIGKILLs under load): ${calls.length} calls; rows ${rows}; missing ${calls.length - distinct}; duplicated ${rows - distinct}`);
    expect(rows).toBe(calls.length);
    expect(distinct).toBe(rows);
    await checkTokens();
    const dead = await db.pool.query('SELECT count(*)::int AS n FROM usage_dead_letters');
    expect(dead.rows[0]).toEqual({ n: 0 });
  });
});
