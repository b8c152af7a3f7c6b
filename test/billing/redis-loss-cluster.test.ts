// The cluster path of a Redis that loses its data: the operator's publishing (gateway/state/operator-state.ts, what
// its leader runs) with DATABASE_URL, two cluster-mode gateways (`npm run gateway`) and the usage exporter on a Redis
// without persistence; Redis killed and restarted empty under steady calls. The gateways answer 503 with retry-after
// (never 401) until the operator's state has rebuilt the money from the Postgres ledger and published again; then
// Redis and the ledger agree to the nano-dollar and nothing was granted twice. (The Kubernetes side, the operator's
// informers and leader election, is tested elsewhere: here its state port is driven as its config controller does.)
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseManifests } from '../../gateway/config/manifests.ts';
import { compile } from '../../gateway/contract/compile.ts';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import { connectOperatorState, type OperatorState } from '../../gateway/state/operator-state.ts';
import { jsonLog } from '../../gateway/usage/exporter/log.ts';
import { startExporter, type RunningExporter } from '../../gateway/usage/exporter/start.ts';
import { ledgerMoney, type LedgerMoney } from '../../gateway/usage/ledger-money.ts';
import { countBy, FLEET_PEPPER, me } from '../helpers/fleet.ts';
import { ledgerOf, settlesDrained, steadyLoad, type LedgerView } from '../helpers/money-loss.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';
import { setup } from './fixtures.ts';

const s = setup(
  [{ name: 'acme', spec: { trialCreditUsd: 1, credits: [{ id: 'topup-1', amountUsd: 10 }] } }],
  [{ name: 'k', account: 'acme', spec: { monthlyBudgetUsd: 5 } }],
);
const key = s.keys.k as string;
let redis: TestRedis;
let pg: TestPostgres;
let ledger: LedgerMoney;
let op: OperatorState;
let exporter: RunningExporter;
const gateways: GatewayProcess[] = [];
const logged: string[] = [];

beforeAll(async () => {
  redis = await startRedis('loss-cluster', { own: true });
  pg = await startPostgres('loss_cluster');
  ledger = ledgerMoney(pg.url, () => {});
  const line = (level: string) => (fields: Record<string, unknown>, message: string) => logged.push(`${level} ${message} ${JSON.stringify(fields)}`);
  op = await connectOperatorState({ url: redis.url, prefix: redis.prefix }, { ledger, log: { info: line('info'), warn: line('warn'), error: line('error') } });
  const compiled = compile(parseManifests(s.docs.map((doc, i) => ({ source: `loss#${i}`, doc }))).set, { pepper: FLEET_PEPPER });
  await op.publish(compiled.snapshot, compiled.keys); // the config controller's publish
  exporter = await startExporter({ redisUrl: redis.url, databaseUrl: pg.url, prefix: redis.prefix, registry: new Registry(), log: jsonLog('error') });
  for (let i = 0; i < 2; i++) {
    const gw = await startGatewayProcess(
      { REDIS_URL: redis.url, SVC_REDIS_PREFIX: redis.prefix, SVC_KEY_PEPPER: FLEET_PEPPER, SVC_CONFIG_POLL_MS: '200', SVC_REDIS_TIMEOUT_MS: '300' },
      ['--cluster'],
    );
    gateways.push(gw);
    await until(
      async () =>
        (await fetch(`${gw.url}/readyz`).then(
          (r) => r.status,
          () => 0,
        )) === 200,
      15_000,
      'a cluster-mode gateway ready',
    );
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await exporter?.stop();
  await op?.close();
  await ledger?.close();
  await redis?.stop();
  await pg?.stop();
});

const pgLedger = (): Promise<LedgerView> => ledgerOf(pg.pool, 'acme', 'k');

describe("Redis loses its data under load, in a cluster: the operator's state rebuilds it", () => {
  it('answers 503 with retry-after (never 401) until the rebuild, then Redis and the ledger agree; nothing granted twice', async () => {
    await until(async () => (await pgLedger()).credits.length === 2, 20_000, 'credits recorded in Postgres');
    const traffic = steadyLoad(() => gateways.map((g) => g.url), key, 4);
    await until(() => traffic.results.filter((r) => r.status === 200).length >= 40, 20_000, 'calls before the loss');
    await until(async () => (await pgLedger()).rows >= 20, 20_000, 'the exporter at work');
    await redis.kill();
    const killedAt = Date.now();
    await redis.restart();
    const restartedAt = Date.now();
    await until(() => traffic.results.some((r) => r.startedAt > restartedAt && r.status === 200 && r.what === 'chat'), 30_000, 'served again');
    const servedAgainAt = Date.now();
    await until(() => traffic.results.filter((r) => r.startedAt > servedAgainAt && r.status === 200).length >= 40, 20_000, 'calls after the rebuild');
    await traffic.stop();

    const results = traffic.results;
    const outage = results.filter((r) => r.status !== 200);
    console.log(
      `cluster path, Redis restarted empty: ${results.length} calls, statuses ${JSON.stringify(countBy(results, (r) => r.status))}; 503s until ${Math.max(...outage.map((r) => r.endedAt)) - killedAt} ms after the kill; ${logged.filter((l) => l.includes('Rebuilt')).join('; ')}`,
    );
    for (const r of outage) {
      expect(r.status, r.body).toBe(503);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'store_unavailable' } });
    }
    expect(logged.some((l) => l.startsWith('info Rebuilt the money state in Redis from the Postgres ledger'))).toBe(true);

    const chats = results.filter((r) => r.what === 'chat' && r.status === 200);
    await until(async () => (await op.ledger('acme')).openHolds === 0, 20_000, 'holds settled');
    await until(() => settlesDrained(gateways.map((g) => g.metricsUrl)), 30_000, 'no settle waiting for Redis in any gateway');
    await until(async () => (await pgLedger()).spent === (await op.ledger('acme')).spentNano, 30_000, 'Postgres caught up with Redis');
    const record = await pgLedger();
    const view = await op.view('acme', 'k', Date.now());
    const lost = chats.length - record.rows;
    console.log(`cluster path: served ${chats.length} calls; charged ${record.rows} (${record.spent} nUSD); ${lost} answered before the kill not exported`);
    expect(record.credits).toEqual([
      { kind: 'credit', credit_id: 'topup-1', amount_nano: String(10 * NANO_PER_USD) },
      { kind: 'trial', credit_id: '', amount_nano: String(1 * NANO_PER_USD) },
    ]);
    expect((await op.ledger('acme')).creditedNano).toBe(11 * NANO_PER_USD);
    expect((await op.ledger('acme')).spentNano).toBe(record.spent);
    expect(view.keyMonthSpendNano).toBe(record.keyMonth);
    expect((await me(gateways[0]?.url as string, key)).body).toMatchObject({
      balance_usd: (11 * NANO_PER_USD - record.spent) / NANO_PER_USD,
      month_spend_usd: record.keyMonth / NANO_PER_USD,
    });
    expect(lost).toBeGreaterThanOrEqual(0);
    expect(chats.filter((r) => r.endedAt <= killedAt).length).toBeGreaterThanOrEqual(lost);
  }, 180_000);
});
