// The chart's SvcMoneyDrift alert on a real Prometheus: the PrometheusRule as `helm template` renders it, loaded into
// Prometheus, which scrapes a real usage exporter (its reconciliation of Redis's money against the Postgres ledger,
// SVC_RECONCILE_SECONDS=1) beside a standalone gateway on real Redis and Postgres. Quiet while Redis and the ledger
// agree; a spend changed in Redis on purpose is reported by the first reconciliation that began after the change, and
// the alert fires for that account and field; put back, it resolves (docs/operations.md: Redis lost its data).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exporterProcess, type ExporterProcess } from '../helpers/exporter.ts';
import { chat, fleetStore, startFleet, type Fleet } from '../helpers/fleet.ts';
import { ledgerOf } from '../helpers/money-loss.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { metricSum, scrape } from '../helpers/prom.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';
import type { RedisStore } from '../../gateway/state/redis-store.ts';
import { setup } from '../billing/fixtures.ts';
import { alertsOf, renderedRules, writeRules } from './alert-rules.ts';
import { startPrometheus, type TestPrometheus } from './prometheus.ts';

const s = setup([{ name: 'acme', spec: { trialCreditUsd: 1, credits: [{ id: 'topup-1', amountUsd: 10 }] } }], [{ name: 'k', account: 'acme' }]);
const key = s.keys.k as string;
let redis: TestRedis;
let pg: TestPostgres;
let fleet: Fleet;
let store: RedisStore;
let exporter: ExporterProcess;
let exporterUrl: string;
let prom: TestPrometheus;
let rulesDir: string;

beforeAll(async () => {
  const rules = await renderedRules();
  expect(alertsOf(rules).map((r) => r.alert)).toContain('SvcMoneyDrift');
  const written = writeRules(rules);
  rulesDir = written.dir;
  redis = await startRedis('drift-alert', { own: true });
  pg = await startPostgres('drift_alert');
  fleet = await startFleet(1, redis, s.docs);
  store = await fleetStore(redis);
  exporter = exporterProcess({ REDIS_URL: redis.url, DATABASE_URL: pg.url, SVC_REDIS_PREFIX: redis.prefix, SVC_RECONCILE_SECONDS: '1' });
  exporterUrl = await exporter.url;
  // As the chart's ServiceMonitor would label the exporter's scrape.
  prom = await startPrometheus([new URL(exporterUrl).host], { namespace: 'svc', container: 'exporter' }, undefined, [], [written.file]);
}, 120_000);

afterAll(async () => {
  await prom?.stop();
  await exporter?.kill();
  await store?.close();
  await fleet?.stop();
  await redis?.stop();
  await pg?.stop();
  if (rulesDir) rmSync(rulesDir, { recursive: true, force: true });
});

const runs = async (): Promise<number> => metricSum(await scrape(exporterUrl), 'svc_money_reconcile_runs_total');
const drift = async (): Promise<number> => metricSum(await scrape(exporterUrl), 'svc_money_drift_usd', { account: 'acme', field: 'spent' });
const driftAlerts = async (): Promise<Awaited<ReturnType<TestPrometheus['alerts']>>> =>
  (await prom.alerts()).filter((a) => a.labels.alertname === 'SvcMoneyDrift');

describe('SvcMoneyDrift on a real Prometheus', () => {
  it('stays quiet while Redis and the ledger agree, fires for the account within one reconciliation of a drift, resolves after', async () => {
    // Spend on both sides: calls charged in Redis, exported to the ledger.
    for (let i = 0; i < 5; i++) expect((await chat(fleet.urls[0] as string, key)).status).toBe(200);
    await until(async () => (await store.ledger('acme')).openHolds === 0, 20_000, 'holds settled');
    await until(async () => (await ledgerOf(pg.pool, 'acme', 'k')).spent === (await store.ledger('acme')).spentNano, 30_000, 'the ledger caught up');
    expect((await store.ledger('acme')).spentNano).toBeGreaterThan(0);

    // Prometheus has the agreeing gauge (0) and evaluated the rules on it a few times since: no alert.
    await until(async () => (await prom.query('svc_money_drift_usd{account="acme",field="spent"} == 0')).length === 1, 60_000, 'the gauge at 0 in Prometheus');
    const seenAt = Date.now();
    await until(async () => (await prom.lastEvaluation()) > seenAt + 2_000, 60_000, 'rules evaluated on it');
    expect(await prom.query('svc_money_reconcile_runs_total{result="ok"} > 0')).toHaveLength(1);
    expect(await driftAlerts()).toEqual([]);

    // A spend changed in Redis behind the ledger's back.
    const acct = `${redis.prefix}:{a:acme}:acct`;
    const before = await runs();
    await redis.client.hincrby(acct, 'spent', 12_345);
    await until(async () => (await drift()) !== 0, 30_000, 'the drift reported by the exporter');
    // Reported within one check interval: by the reconciliation that began after the change (the one running at the
    // moment of the change, if any, may have read Redis before it).
    expect((await runs()) - before).toBeLessThanOrEqual(2);
    expect(await drift()).toBeCloseTo(12_345 / 1e9, 12);
    expect(exporter.output()).toMatch(/Money drift: account acme: Redis's spent is above the Postgres ledger's by 0\.000012345 USD/);

    await until(async () => (await driftAlerts()).some((a) => a.state === 'firing'), 60_000, 'SvcMoneyDrift firing in Prometheus');
    const [alert] = await driftAlerts();
    expect(alert?.labels).toMatchObject({ alertname: 'SvcMoneyDrift', severity: 'critical', namespace: 'svc', account: 'acme', field: 'spent' });
    expect(alert?.annotations.summary).toBe("Account acme: Redis's spent is 1.2345e-05 USD off the Postgres ledger");
    expect(await driftAlerts()).toHaveLength(1); // only that account's spend: its credits agree

    // Put back: the gauge returns to 0 and the alert resolves.
    await redis.client.hincrby(acct, 'spent', -12_345);
    await until(async () => (await drift()) === 0, 30_000, 'the drift gone');
    await until(async () => (await driftAlerts()).length === 0, 60_000, 'SvcMoneyDrift resolved');
  }, 240_000);
});
