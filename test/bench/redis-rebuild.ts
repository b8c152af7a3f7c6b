// node test/bench/redis-rebuild.ts [--accounts N] [--keys-per-account N] [--recent N]: how long a Redis that lost its
// data takes to be rebuilt from the Postgres ledger (gateway/state/money-guard.ts), on a throwaway Redis and Postgres:
// the ledger read, the accounts' money written back, the config (every key record) published; then one account
// checked. --recent N: one account's N usage events recorded lately (remembered as settled by the rebuild), and the
// longest PING another client waited for while the rebuild ran.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import type { KeyRecord, Snapshot } from '../../gateway/contract/snapshot.ts';
import { MoneyGuard } from '../../gateway/state/money-guard.ts';
import { restoreAccounts, SettledStage } from '../../gateway/state/money-restore.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { ledgerMoney } from '../../gateway/usage/ledger-money.ts';
import { migrate } from '../../gateway/usage/postgres/migrate.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { startRedis } from '../helpers/redis.ts';

const { values } = parseArgs({
  options: { accounts: { type: 'string', default: '5000' }, 'keys-per-account': { type: 'string', default: '10' }, recent: { type: 'string', default: '0' } },
});
const RECENT = Number(values.recent);
const ACCOUNTS = Number(values.accounts);
const PER = Number(values['keys-per-account']);
const NANO = 1_000_000_000;

const redis = await startRedis('rebuild', { own: true });
const pg = await startPostgres('rebuild', { own: true });
try {
  await migrate(pg.pool);
  // The record: a trial and a credit per account, this month's spend of every key.
  await pg.pool.query(
    `INSERT INTO ledger_credits (account, kind, credit_id, amount_nano)
     SELECT 'acct-' || a, k, CASE WHEN k = 'trial' THEN '' ELSE 'topup-1' END, CASE WHEN k = 'trial' THEN $2::bigint ELSE 10 * $2::bigint END
     FROM generate_series(0, $1 - 1) a, unnest(ARRAY['trial', 'credit']) k`,
    [ACCOUNTS, NANO],
  );
  await pg.pool.query(
    `INSERT INTO usage_daily (day, account, api_key, task_type, requested_model, served_model, fallback_reason, requests, errors,
       fallbacks, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_nano, fee_nano, latency_ms_sum)
     SELECT (now() AT TIME ZONE 'UTC')::date, 'acct-' || a, 'k' || k, '', 'm', 'm', '', 10, 0, 0, 1000, 500, 0, 0, 1000000 + a * 10 + k, 40000, 100
     FROM generate_series(0, $1 - 1) a, generate_series(0, $2 - 1) k`,
    [ACCOUNTS, PER],
  );
  if (RECENT > 0) {
    // Free calls (cost 0): the balances checked below stay as they are.
    await pg.pool.query('SELECT usage_ensure_partition(now())');
    await pg.pool.query(
      `INSERT INTO usage_events (event_id, created_at, account, api_key, endpoint, requested_model, fallback, status, stream,
         input_tokens, output_tokens, cost_nano, fee_nano, latency_ms)
       SELECT gen_random_uuid(), now(), 'acct-0', 'k0', 'chat.completions', 'm', false, 200, false, 1, 1, 0, 0, 1 FROM generate_series(1, $1)`,
      [RECENT],
    );
  }
  const plan = { name: 'builder', tier: 2, anthropicEndpoint: true, models: null, rpm: null, tpm: null };
  const accounts: Snapshot['accounts'] = {};
  const keys: KeyRecord[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const name = `acct-${a}`;
    accounts[name] = { name, plan: 'builder', trialCreditNano: NANO, credits: [{ id: 'topup-1', amountNano: 10 * NANO }] };
    for (let k = 0; k < PER; k++) {
      keys.push({
        hash: randomBytes(32).toString('hex'),
        name: `k${k}`,
        display: 'sk-svc-…abcd',
        account: name,
        monthlyBudgetNano: 5 * NANO,
        rpm: null,
        tpm: null,
        models: null,
        revoked: false,
      });
    }
  }
  const snapshot: Snapshot = { schema: 1, version: 'bench', plans: { builder: plan }, accounts, models: {} };
  const store = await RedisStore.connect({ url: redis.url, prefix: redis.prefix, commandTimeoutMs: 10_000 });
  const ledger = ledgerMoney(pg.url, () => {});
  // The pieces, timed on their own (on an empty Redis).
  let t = Date.now();
  const stage = new SettledStage(store.redis, store.prefix);
  const records = await ledger.record(stage.add);
  const readMs = Date.now() - t;
  t = Date.now();
  await restoreAccounts(store.redis, store.prefix, records, stage);
  const restoreMs = Date.now() - t;
  t = Date.now();
  await store.applyConfig(snapshot, keys);
  const publishMs = Date.now() - t;
  // The whole rebuild as a gateway runs it, after the same data was lost.
  await redis.client.flushall();
  const silent = { info: () => {}, warn: () => {}, error: () => {} };
  const guard = new MoneyGuard({
    redis: store.redis,
    prefix: store.prefix,
    publish: () => store.applyConfig(snapshot, keys),
    record: (settled) => ledger.record(settled),
    recordGrants: () => ledger.recordGrants(store.redis, store.prefix),
    accounts: () => Object.values(accounts),
    log: silent,
  });
  // Another client's PINGs meanwhile: how long Redis was held by any one step.
  const pinger = new Redis(redis.url);
  let longestPingMs = 0;
  let pinging = true;
  // And this process's heap: the most it held during the rebuild, over what it held before.
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  const pings = (async (): Promise<void> => {
    while (pinging) {
      const p0 = performance.now();
      await pinger.ping();
      longestPingMs = Math.max(longestPingMs, performance.now() - p0);
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  t = Date.now();
  await guard.start();
  const totalMs = Date.now() - t;
  guard.stop();
  pinging = false;
  await pings;
  pinger.disconnect();
  const v = await store.view('acct-7', 'k3', Date.now());
  const expectKey = 1_000_000 + 7 * 10 + 3;
  const expectSpent = Array.from({ length: PER }, (_, k) => 1_000_000 + 70 + k).reduce((x, y) => x + y, 0);
  const ok = v.keyMonthSpendNano === expectKey && v.balanceNano === 11 * NANO - expectSpent && guard.state === 'live';
  console.log(
    `rebuild of ${ACCOUNTS} accounts, ${keys.length} keys: ${totalMs} ms in all (ledger read ${readMs} ms, money of every account ${restoreMs} ms, ` +
      `config and key records published ${publishMs} ms); ${RECENT} recent usage events of acct-0; longest PING meanwhile ` +
      `${longestPingMs.toFixed(0)} ms; heap held at most ${((heapPeak - heapBefore) / 1e6).toFixed(0)} MB over the ${(heapBefore / 1e6).toFixed(0)} MB before; acct-7/k3 checked: ${ok ? 'agrees with the ledger' : `WRONG ${JSON.stringify(v)}`}`,
  );
  await ledger.close();
  await store.close();
  if (!ok) process.exitCode = 1;
} finally {
  await redis.stop();
  await pg.stop();
}
