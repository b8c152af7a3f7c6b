// The cluster path of a Redis that loses its data, every part real: kube-apiserver + etcd with the CRDs, the operator
// process (`node operator/main.ts`, with DATABASE_URL: its leader rebuilds), two cluster-mode gateways, the usage
// exporter process, the console process, Postgres, and a Redis without persistence killed and restarted empty under
// steady calls. Callers see only 503 store_unavailable with retry-after (never 401) until the leader has rebuilt the
// money from the Postgres ledger; afterwards /v1/me, the key's budget use, `kubectl get accounts` / `apikeys`, the
// console's billing page and the ledger agree with the calls served, and the trial and the credit were granted once.
// Then a drift injected in Redis is reported by the exporter's reconciliation and recorded by the operator's leader
// as a MoneyDrift Event on the Account (docs/operations.md: Redis lost its data, Money drift).
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { formatUsd, budgetPercent } from '../../operator/controllers/spend.ts';
import { exactUsd } from '../../billing/statements/statement.ts';
import { startControlPlane } from '../k8s/control-plane.ts';
import { installCrds } from '../k8s/install-crds.ts';
import { accountUser, consoleIdentity } from '../console/cluster-identity.ts';
import { startConsoleProcess, type ConsoleProcess } from '../console/console-process.ts';
import { exporterProcess, rowCounts, type ExporterProcess } from '../helpers/exporter.ts';
import { countBy, me } from '../helpers/fleet.ts';
import { ledgerOf, settlesDrained, steadyLoad, type LedgerView } from '../helpers/money-loss.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';
import { gatewayReady, install, PEPPER, type Cluster, type Installation } from '../operator/harness.ts';
import { adminApi, secretKey, waitFor } from '../operator/kube-api.ts';
import type { OperatorProcess } from '../operator/operator-process.ts';

const API = 'gateway.svc.dev/v1alpha1';
/** The reconciliation's interval (s): the drift must be an Event before the exporter's second check after the one that found it. */
const RECONCILE_SECONDS = 3;
/** 100 times the usual mock price, so the spend of a few hundred calls shows in the cents `kubectl get` prints. */
const MANIFESTS = [
  { apiVersion: API, kind: 'Plan', metadata: { name: 'builder' }, spec: { tier: 2 } },
  {
    apiVersion: API,
    kind: 'Account',
    metadata: { name: 'acme' },
    spec: { planRef: 'builder', trialCreditUsd: 1, credits: [{ id: 'topup-1', amountUsd: 10 }] },
  },
  { apiVersion: API, kind: 'ApiKey', metadata: { name: 'k' }, spec: { accountRef: 'acme', monthlyBudgetUsd: 8 } },
  {
    apiVersion: API,
    kind: 'ModelRoute',
    metadata: { name: 'mock-fast' },
    spec: {
      pricing: { inputPerMTokUsd: 104, outputPerMTokUsd: 208 },
      targets: [{ name: 'mock-a', provider: 'mock', mock: { latencyMs: 0, chunkDelayMs: 0 } }],
    },
  },
];

let cluster: Cluster;
let redis: TestRedis;
let pg: TestPostgres;
let inst: Installation;
let operator: OperatorProcess;
let exporter: ExporterProcess;
let exporterUrl: string;
let consoleProc: ConsoleProcess;
let userToken: string;
let store: RedisStore;
let key: string;

beforeAll(async () => {
  const [cp, r, p] = await Promise.all([startControlPlane(), startRedis('loss-kube', { own: true }), startPostgres('loss_kube')]);
  redis = r; // --save '' --appendonly no: a restart comes back empty
  pg = p;
  await installCrds(cp);
  cluster = { cp, redis, api: adminApi(cp), stop: async () => void (await Promise.allSettled([cp.stop(), redis.stop()])) };
  inst = await install(cluster, 'loss-kube');
  await inst.kubectlOk(['apply', '-f', '-'], MANIFESTS.map((m) => stringify(m)).join('---\n'));
  operator = await inst.startOperator('op-0', { DATABASE_URL: pg.url, SVC_SPEND_STATUS_SECONDS: '1' });
  const env = { REDIS_URL: redis.url, SVC_REDIS_PREFIX: inst.prefix, DATABASE_URL: pg.url };
  exporter = exporterProcess({ ...env, SVC_RECONCILE_SECONDS: String(RECONCILE_SECONDS) });
  exporterUrl = await exporter.url;
  for (let i = 0; i < 2; i++) {
    const gw = await inst.startGateway({ SVC_CONFIG_POLL_MS: '200', SVC_REDIS_TIMEOUT_MS: '300' });
    await gatewayReady(gw, 60_000, () => operator.output());
  }
  key = await waitFor("the key's Secret", () => secretKey(cluster.api, inst.ns, 'k-key'), 60_000, 100);
  const consoleKubeconfig = await consoleIdentity(cp, inst.ns);
  userToken = await accountUser(cp, inst.ns, 'alice', ['acme'], ['get', 'view-usage', 'manage-billing']);
  consoleProc = await startConsoleProcess({
    KUBECONFIG: consoleKubeconfig,
    WATCH_NAMESPACE: inst.ns,
    REDIS_URL: redis.url,
    SVC_REDIS_PREFIX: inst.prefix,
    SVC_KEY_PEPPER: PEPPER,
    DATABASE_URL: pg.url,
  });
  store = await RedisStore.connect({ url: redis.url, prefix: inst.prefix });
}, 300_000);

afterAll(async () => {
  await store?.close();
  await consoleProc?.stop();
  await exporter?.kill();
  await inst?.stop();
  await cluster?.stop();
  await pg?.stop();
});

const pgLedger = (): Promise<LedgerView> => ledgerOf(pg.pool, 'acme', 'k');

const once = [
  { kind: 'credit', credit_id: 'topup-1', amount_nano: String(10 * NANO_PER_USD) },
  { kind: 'trial', credit_id: '', amount_nano: String(1 * NANO_PER_USD) },
];

/** `kubectl get <plural> <name>` as printed: its columns by header. */
async function printed(plural: string, name: string): Promise<Record<string, string>> {
  const out = (await inst.kubectlOk(['get', plural, name])).trim().split('\n');
  const header = (out[0] ?? '').split(/\s{2,}/);
  const row = (out[1] ?? '').split(/\s{2,}/);
  return Object.fromEntries(header.map((h, i) => [h, row[i] ?? '']));
}

/** The balance the console's billing page shows (its exact figure, the `value` of the amount), signed in as a user would. */
async function consoleBalance(): Promise<string> {
  const base = consoleProc.url;
  const login = await fetch(`${base}/dashboard/login`);
  const pre = /svc_console_login=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1] as string;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await login.text())?.[1] as string;
  const signIn = await fetch(`${base}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `svc_console_login=${pre}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token: userToken, next: '/dashboard/billing' }).toString(),
  });
  expect(signIn.status, await signIn.text()).toBe(303);
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const page = await fetch(`${base}/dashboard/billing?account=acme`, { headers: { cookie } });
  const body = await page.text();
  expect(page.status, body).toBe(200);
  const m = /<dt>Balance<\/dt><dd><data class="usd" value="([^"]+)"/.exec(body);
  if (!m?.[1]) throw new Error(`no balance on the billing page:\n${body}`);
  return m[1];
}

async function exporterMetric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${exporterUrl}/metrics`)).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^(\w+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (m?.[1] === name && want.every((w) => (m[2] ?? '').includes(w))) sum += Number(m[3]);
  }
  return sum;
}

const reconciles = (): Promise<number> => exporterMetric('svc_money_reconcile_runs_total');

async function driftEvents(): Promise<Array<{ type: string; message: string; component: string }>> {
  const list = await cluster.api.core.listNamespacedEvent({
    namespace: inst.ns,
    fieldSelector: 'involvedObject.kind=Account,involvedObject.name=acme,reason=MoneyDrift',
  });
  return list.items.map((e) => ({ type: e.type ?? '', message: e.message ?? '', component: e.source?.component ?? '' }));
}

describe('Redis loses its data under load, in a cluster of real processes', () => {
  it('answers 503 with retry-after (never 401) until the leader rebuilt it; then every view agrees with the calls served', async () => {
    await until(async () => (await pgLedger()).credits.length === 2, 30_000, 'credits recorded in Postgres');
    const traffic = steadyLoad(() => inst.gateways.map((g) => g.url), key, 4);
    await until(() => traffic.results.filter((r) => r.status === 200).length >= 60, 60_000, 'calls before the loss');
    await until(async () => (await pgLedger()).rows >= 30, 60_000, 'the exporter at work');
    await redis.kill();
    const killedAt = Date.now();
    await redis.restart(); // empty: no RDB, no AOF
    const restartedAt = Date.now();
    await until(() => traffic.results.some((r) => r.startedAt > restartedAt && r.status === 200 && r.what === 'chat'), 60_000, 'served again');
    const servedAgainAt = Date.now();
    await until(() => traffic.results.filter((r) => r.startedAt > servedAgainAt && r.status === 200).length >= 60, 60_000, 'calls after the rebuild');
    await traffic.stop();

    const results = traffic.results;
    const outage = results.filter((r) => r.status !== 200);
    const rebuilt = operator.logs().filter((l) => l.msg === 'Rebuilt the money state in Redis from the Postgres ledger');
    console.log(
      `cluster path (operator process, kube-apiserver): ${results.length} calls, statuses ${JSON.stringify(countBy(results, (r) => r.status))}; ` +
        `503s until ${Math.max(...outage.map((r) => r.endedAt)) - killedAt} ms after the kill (restart took ${restartedAt - killedAt} ms); ` +
        `rebuild: ${JSON.stringify(rebuilt.map((l) => ({ accounts: l.accounts, durationMs: l.durationMs })))}`,
    );
    for (const r of outage) {
      expect(r.status, r.body).toBe(503);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'store_unavailable' } });
    }
    expect(outage.length).toBeGreaterThan(0); // the loss was seen by callers, and only as 503
    expect(rebuilt.length).toBeGreaterThanOrEqual(1); // the operator's leader rebuilt it

    // Every charge reaches Postgres (the exporter drains the new streams); Redis and the ledger then agree exactly.
    const chats = results.filter((r) => r.what === 'chat' && r.status === 200);
    await until(async () => (await store.ledger('acme')).openHolds === 0, 30_000, 'holds settled');
    await until(() => settlesDrained(inst.gateways.map((g) => g.metricsUrl)), 30_000, 'no settle waiting for Redis in any gateway');
    await until(async () => (await pgLedger()).spent === (await store.ledger('acme')).spentNano, 60_000, 'Postgres caught up with Redis');
    const record = await pgLedger();
    const counts = await rowCounts(pg.pool);
    const balanceNano = 11 * NANO_PER_USD - record.spent;
    const lost = chats.length - record.rows;
    console.log(
      `cluster path: served ${chats.length} calls; charged ${record.rows} (${record.spent} nUSD, balance ${balanceNano} nUSD); ${lost} answered before the kill were not exported`,
    );
    expect(counts.rows).toBe(counts.distinct); // no call charged twice
    expect(lost).toBeGreaterThanOrEqual(0);
    expect(chats.filter((r) => r.endedAt <= killedAt).length).toBeGreaterThanOrEqual(lost);
    expect(record.spent).toBeGreaterThan(NANO_PER_USD / 100); // enough to show in the cents of `kubectl get`

    // The trial and the credit, once: in the ledger and in Redis.
    expect(record.credits).toEqual(once);
    const ledger = await store.ledger('acme');
    expect(ledger.creditedNano).toBe(11 * NANO_PER_USD);
    expect(ledger.spentNano).toBe(record.spent);
    // The key's budget use, and what the caller's /v1/me says.
    const view = await store.view('acme', 'k', Date.now());
    expect(view.keyMonthSpendNano).toBe(record.keyMonth);
    expect(view.accountMonthSpendNano).toBe(record.keyMonth);
    for (const gw of inst.gateways) {
      expect((await me(gw.url, key)).body).toMatchObject({ balance_usd: balanceNano / NANO_PER_USD, month_spend_usd: record.keyMonth / NANO_PER_USD });
    }
    // `kubectl get accounts` and `kubectl get apikeys`: what the leader's spend refresh wrote (to the cent it prints).
    const wantAccount = { Spend: formatUsd(record.keyMonth), Balance: formatUsd(balanceNano) };
    await until(
      async () => {
        const row = await printed('accounts', 'acme');
        return row.SPEND === wantAccount.Spend && row.BALANCE === wantAccount.Balance;
      },
      60_000,
      `kubectl get accounts showing ${JSON.stringify(wantAccount)}`,
    );
    const keyRow = await waitFor(
      'kubectl get apikeys showing the month spend and budget use',
      async () => {
        const row = await printed('apikeys', 'k');
        return row.SPEND === formatUsd(record.keyMonth) && row['BUDGET%'] === String(budgetPercent(record.keyMonth, 8 * NANO_PER_USD)) ? row : false;
      },
      60_000,
      200,
    );
    console.log(`kubectl get accounts acme: ${JSON.stringify(await printed('accounts', 'acme'))}; apikeys k: ${JSON.stringify(keyRow)}`);
    // The console's billing page (its session is in the rebuilt Redis: signed in afterwards), to the nano-dollar.
    expect(await consoleBalance()).toBe(exactUsd(balanceNano));

    // After the rebuild the reconciliation finds nothing to report: no drift, no MoneyDrift Event.
    const runs = await reconciles();
    await until(async () => (await reconciles()) >= runs + 2, 60_000, 'two reconciliations after the rebuild');
    expect(await exporterMetric('svc_money_drift_usd', { account: 'acme' })).toBe(0);
    expect(await driftEvents()).toEqual([]);
  }, 600_000);

  it('records a drift injected in Redis as a MoneyDrift Event on the Account, once, before the next check', async () => {
    const acct = `${inst.prefix}:{a:acme}:acct`;
    await redis.client.hincrby(acct, 'spent', 12_345); // a spend changed in Redis behind the ledger's back
    const injected = await reconciles();
    const events = await waitFor(
      'a MoneyDrift Event on the Account',
      async () => {
        const e = await driftEvents();
        return e.length > 0 ? e : false;
      },
      60_000,
      100,
    );
    // The first check that began after the change found it (the one running then may not have); the leader told it
    // before the exporter's next check.
    expect((await reconciles()) - injected).toBeLessThanOrEqual(3);
    expect(events).toEqual([
      {
        type: 'Warning',
        component: 'svc-gateway-operator',
        message: expect.stringContaining("Redis's spent is above the Postgres ledger's by 0.000012345 USD (12345 nano-USD)") as string,
      },
    ]);
    // The same line in the exporter's log (one source: the reconciliation), and the metric.
    await until(
      () => exporter.output().includes("Money drift: account acme: Redis's spent is above the Postgres ledger's by 0.000012345 USD"),
      30_000,
      'the log line',
    );
    expect(await exporterMetric('svc_money_drift_usd', { account: 'acme', field: 'spent' })).toBeCloseTo(12_345 / 1e9, 12);
    // A drift that stays is told once, not at every check.
    const seen = await reconciles();
    await until(async () => (await reconciles()) >= seen + 2, 60_000, 'two more reconciliations');
    expect(await driftEvents()).toHaveLength(1);
    // Repaired: the metric goes back to 0 and no Event follows.
    await redis.client.hincrby(acct, 'spent', -12_345);
    await until(async () => (await exporterMetric('svc_money_drift_usd', { account: 'acme', field: 'spent' })) === 0, 60_000, 'the drift gone');
    expect(await driftEvents()).toHaveLength(1);
  }, 300_000);
});
