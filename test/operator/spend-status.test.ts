// Spend in Kubernetes terms (docs/kubernetes.md: Spend, budgets and balance in status), on a real kube-apiserver and
// Redis: what a gateway call and the store's charge path put in the ledger appears in the Accounts' and ApiKeys'
// status within the refresh interval; `kubectl get` shows SPEND, BUDGET% and BALANCE; KeyBudgetWarning at exactly
// 80%, KeyBudgetExhausted at exactly 100% and LowBalance are each recorded once, also across an operator restart;
// unchanged figures are not written again; Redis down leaves status alone, logged and counted, and nothing crashes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../gateway/contract/keys.ts';
import { feeShareNano } from '../../gateway/contract/money.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { monthOf } from '../../gateway/state/store.ts';
import { formatUsd } from '../../operator/controllers/spend.ts';
import { docExample } from '../helpers/docs.ts';
import { chat } from '../helpers/fleet.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { gatewayReady, install, PEPPER, startCluster, type Cluster, type Installation } from './harness.ts';
import type { OperatorProcess } from './operator-process.ts';
import { getCustom, secretKey, waitFor } from './kube-api.ts';
import { settled } from '../helpers/settled.ts';

const USD = 1_000_000_000;
/** Waits on a machine shared by many test runs: generous, since only the outcome is asserted. */
const SLOW = 60_000;
/** Lease timings of a loaded machine (this test is about spend, not failover). */
const LEASE = { SVC_LEASE_DURATION_MS: '15000', SVC_LEASE_RENEW_DEADLINE_MS: '10000', SVC_LEASE_RETRY_PERIOD_MS: '2000' };
const OPERATOR_ENV = { ...LEASE, SVC_SPEND_STATUS_SECONDS: '1' };

let cluster: Cluster;
let redis: TestRedis;
let inst: Installation;
let store: RedisStore;
let operator: OperatorProcess;

const base = `apiVersion: gateway.svc.dev/v1alpha1
kind: Plan
metadata: {name: builder}
spec: {tier: 2}
---
apiVersion: gateway.svc.dev/v1alpha1
kind: ModelRoute
metadata: {name: mock-fast}
spec:
  pricing: {inputPerMTokUsd: 10000, outputPerMTokUsd: 10000}
  targets: [{name: mock-a, provider: mock}]
`;

interface SpendObject {
  metadata: { name: string };
  status?: {
    monthSpendUsd?: string;
    balanceUsd?: string;
    budgetUsedPercent?: number;
    budgetAlertLevel?: string;
    lowBalance?: boolean;
    spendMonth?: string;
    spendObservedTime?: string;
  };
}

const apiKey = (name: string): Promise<SpendObject | undefined> => getCustom<SpendObject>(cluster.api, inst.ns, 'apikeys', name);
const account = (name: string): Promise<SpendObject | undefined> => getCustom<SpendObject>(cluster.api, inst.ns, 'accounts', name);

/** Charges `costNano` to a key through the store's own admit and settle, as a gateway does after a call. */
async function charge(keyName: string, costNano: number): Promise<void> {
  const key = await secretKey(cluster.api, inst.ns, `${keyName}-key`);
  const record = await store.findKey(hashKey(key as string, PEPPER));
  if (!record) throw new Error(`key ${keyName} is not in Redis`);
  const now = Date.now();
  const acct = { name: record.account, plan: 'builder', trialCreditNano: 0, credits: [] };
  const d = await store.admit({ eventId: randomUUID(), key: record, account: acct, tokens: 1, holdNano: costNano, now });
  if (!d.ok) throw new Error(`charge of ${costNano} to ${keyName} refused: ${d.code} ${d.message}`);
  await store.settle(d.hold, {
    costNano,
    tokens: 1,
    event: {
      eventId: d.hold.id,
      createdAt: new Date(now).toISOString(),
      account: record.account,
      apiKey: keyName,
      taskType: null,
      endpoint: 'chat.completions',
      requestedModel: 'mock-fast',
      servedModel: 'mock-fast',
      upstream: 'mock-a',
      fallback: false,
      fallbackReason: null,
      status: 200,
      errorCode: null,
      stream: false,
      inputTokens: 1,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costNano,
      feeNano: feeShareNano(costNano),
      latencyMs: 0,
      ttftMs: 0,
    },
  });
}

/** Events of one object with one reason, as `kubectl get events` lists them. */
async function events(name: string, reason: string): Promise<string[]> {
  const list = await cluster.api.core.listNamespacedEvent({ namespace: inst.ns, fieldSelector: `involvedObject.name=${name},reason=${reason}` });
  return list.items.map((e) => e.message ?? '');
}

const refreshes = (op: OperatorProcess, result: string): Promise<number> => op.metric('svc_operator_spend_refresh_total', { result });

/** Waits until the operator has finished `n` more spend refreshes (of any result). */
async function moreRefreshes(op: OperatorProcess, n: number): Promise<void> {
  const total = async (): Promise<number> => (await refreshes(op, 'success')) + (await refreshes(op, 'error'));
  const start = await total();
  await waitFor(`${n} more spend refreshes`, async () => (await total()) >= start + n, SLOW, 100);
}

async function statusOf(
  kind: 'apikey' | 'account',
  name: string,
  want: (s: NonNullable<SpendObject['status']>) => boolean,
): Promise<NonNullable<SpendObject['status']>> {
  return waitFor(
    `${kind} ${name} status`,
    async () => {
      const s = (await (kind === 'apikey' ? apiKey(name) : account(name)))?.status;
      return s && want(s) ? s : undefined;
    },
    SLOW,
    100,
  );
}

beforeAll(async () => {
  cluster = await startCluster('spend');
  // A Redis of this file's own, so the last test can stop it.
  redis = await startRedis('spend', { own: true });
  inst = await install({ ...cluster, redis }, 'spend');
  operator = await inst.startOperator('op-0', OPERATOR_ENV);
  await inst.startGateway();
  await inst.kubectlOk(['apply', '-f', '-'], base);
  await inst.kubectlOk(['apply', '-f', '-'], docExample('docs/kubernetes.md', 'spend'));
  store = await RedisStore.connect({ url: redis.url, prefix: inst.prefix });
  await gatewayReady(inst.gateways[0] as NonNullable<Installation['gateways'][0]>, SLOW, () => operator.output());
  for (const k of ['ci-bot', 'batch', 'frozen']) {
    await waitFor(
      `${k} in Redis`,
      async () => {
        const key = await secretKey(cluster.api, inst.ns, `${k}-key`);
        return key !== undefined && (await store.findKey(hashKey(key, PEPPER))) !== null;
      },
      SLOW,
      100,
    );
  }
}, 240_000);

afterAll(async () => {
  await store?.close();
  await inst?.stop();
  await redis?.stop();
  await cluster?.stop();
});

describe('spend in status', () => {
  it('shows what a gateway call charged within the refresh interval; no percent without a budget', { timeout: 120_000 }, async () => {
    const key = await secretKey(cluster.api, inst.ns, 'batch-key');
    const r = await chat(inst.gateways[0]?.url as string, key as string, { model: 'mock-fast' });
    expect(r.status).toBe(200);
    await settled(store, 'acme');
    const view = await store.view('acme', 'batch', Date.now());
    expect(view.keyMonthSpendNano).toBeGreaterThan(0);
    const s = await statusOf('apikey', 'batch', (x) => x.monthSpendUsd === formatUsd(view.keyMonthSpendNano));
    expect(s.monthSpendUsd).not.toBe('0.00');
    expect(s.spendMonth).toBe(monthOf(Date.now()));
    expect(s.budgetUsedPercent).toBeUndefined();
    expect(s.budgetAlertLevel).toBeUndefined();
    expect(Date.parse(s.spendObservedTime as string)).toBeGreaterThan(Date.now() - SLOW);
    const a = await statusOf('account', 'acme', (x) => x.monthSpendUsd === formatUsd(view.accountMonthSpendNano));
    expect(a.balanceUsd).toBe(formatUsd(view.balanceNano));
    expect(a.lowBalance).toBe(false);
    expect(await events('batch', 'KeyBudgetWarning')).toEqual([]);
  });

  it('a budget of 0 reads 100% and is told once', { timeout: 120_000 }, async () => {
    const s = await statusOf('apikey', 'frozen', (x) => x.budgetUsedPercent !== undefined);
    expect(s).toMatchObject({ monthSpendUsd: '0.00', budgetUsedPercent: 100, budgetAlertLevel: 'Exhausted' });
    await moreRefreshes(operator, 3);
    expect(await events('frozen', 'KeyBudgetExhausted')).toEqual([
      'The key has a monthly budget of $0.00: every call is refused with budget_exceeded until spec.monthlyBudgetUsd is raised.',
    ]);
  });

  it('records KeyBudgetWarning at exactly 80% and KeyBudgetExhausted at exactly 100%, each once', { timeout: 180_000 }, async () => {
    await charge('ci-bot', 7_990_000_000);
    expect(await statusOf('apikey', 'ci-bot', (x) => x.monthSpendUsd === '7.99')).toMatchObject({ budgetUsedPercent: 79 });
    await moreRefreshes(operator, 2);
    expect((await apiKey('ci-bot'))?.status?.budgetAlertLevel).toBeUndefined();
    expect(await events('ci-bot', 'KeyBudgetWarning')).toEqual([]);

    await charge('ci-bot', 10_000_000);
    expect(await statusOf('apikey', 'ci-bot', (x) => x.monthSpendUsd === '8.00')).toMatchObject({ budgetUsedPercent: 80, budgetAlertLevel: 'Warning' });
    await moreRefreshes(operator, 3);
    expect(await events('ci-bot', 'KeyBudgetWarning')).toEqual([
      'The key has used 80% ($8.00 of its $10.00 monthly budget) this month: at 100% its calls are refused with budget_exceeded until the month ends (UTC) or spec.monthlyBudgetUsd is raised.',
    ]);

    // Further spend below 100% changes the figures, not the level: no second Event.
    await charge('ci-bot', 1 * USD);
    expect(await statusOf('apikey', 'ci-bot', (x) => x.monthSpendUsd === '9.00')).toMatchObject({ budgetUsedPercent: 90, budgetAlertLevel: 'Warning' });
    await moreRefreshes(operator, 2);
    expect(await events('ci-bot', 'KeyBudgetWarning')).toHaveLength(1);

    await charge('ci-bot', 1 * USD);
    expect(await statusOf('apikey', 'ci-bot', (x) => x.monthSpendUsd === '10.00')).toMatchObject({ budgetUsedPercent: 100, budgetAlertLevel: 'Exhausted' });
    await moreRefreshes(operator, 3);
    expect(await events('ci-bot', 'KeyBudgetExhausted')).toEqual([
      'The key has used its whole monthly budget ($10.00 of its $10.00 monthly budget): its calls are refused with budget_exceeded until the month ends (UTC) or spec.monthlyBudgetUsd is raised.',
    ]);
    expect(await events('ci-bot', 'KeyBudgetWarning')).toHaveLength(1);
    // And the gateway refuses the key now, as the Event says.
    const key = await secretKey(cluster.api, inst.ns, 'ci-bot-key');
    const r = await chat(inst.gateways[0]?.url as string, key as string, { model: 'mock-fast' });
    expect(r.status).toBe(402);
    expect(r.body).toContain('budget_exceeded');
  });

  it('records LowBalance once when the balance drops below spec.lowBalanceThresholdUsd', { timeout: 120_000 }, async () => {
    await charge('batch', 6 * USD);
    const view = await store.view('acme', '', Date.now());
    expect(view.balanceNano).toBeLessThan(5 * USD);
    const a = await statusOf('account', 'acme', (x) => x.lowBalance === true);
    expect(a.balanceUsd).toBe(formatUsd(view.balanceNano));
    await moreRefreshes(operator, 3);
    expect(await events('acme', 'LowBalance')).toEqual([
      `The balance is $${formatUsd(view.balanceNano)}, below the threshold of $5.00 (spec.lowBalanceThresholdUsd): add a credit before it runs out, or calls of every key of the account are refused with insufficient_balance.`,
    ]);
  });

  it('kubectl get shows SPEND and BUDGET% for ApiKeys, SPEND and BALANCE for Accounts', { timeout: 60_000 }, async () => {
    const keys = (await inst.kubectlOk(['get', 'apikeys', 'ci-bot'])).trim().split('\n');
    expect(keys[0]?.split(/\s+/)).toEqual(['NAME', 'STATE', 'KEY', 'ACCOUNT', 'BUDGET', 'SPEND', 'BUDGET%', 'AGE', 'EXPIRES']);
    expect(keys[1]?.split(/\s+/).slice(0, 7)).toEqual(['ci-bot', 'Active', expect.stringMatching(/^sk-svc-…\w{4}$/), 'acme', '10', '10.00', '100']);
    const balance = (await account('acme'))?.status?.balanceUsd;
    const spend = (await account('acme'))?.status?.monthSpendUsd;
    const accounts = (await inst.kubectlOk(['get', 'accounts', 'acme'])).trim().split('\n');
    expect(accounts[0]?.split(/\s+/)).toEqual(['NAME', 'PLAN', 'SPEND', 'BALANCE', 'READY', 'AGE']);
    expect(accounts[1]?.split(/\s+/).slice(0, 5)).toEqual(['acme', 'builder', spend, balance, 'True']);
  });

  it('writes nothing while no figure changes, and tells no crossing again after a restart', { timeout: 180_000 }, async () => {
    await moreRefreshes(operator, 1);
    const writes = await operator.metric('svc_operator_spend_status_writes_total');
    await moreRefreshes(operator, 3);
    expect(await operator.metric('svc_operator_spend_status_writes_total')).toBe(writes);

    await operator.kill('SIGTERM');
    operator = await inst.startOperator('op-1', OPERATOR_ENV);
    await waitFor('op-1 leading', async () => (await operator.metric('svc_operator_leader')) === 1, SLOW, 200);
    await moreRefreshes(operator, 2);
    // The new leader writes changed figures (the balance drops further) without telling a crossing again.
    await charge('batch', 100_000_000);
    const view = await store.view('acme', '', Date.now());
    await statusOf('account', 'acme', (x) => x.balanceUsd === formatUsd(view.balanceNano));
    await moreRefreshes(operator, 2);
    expect(await events('ci-bot', 'KeyBudgetWarning')).toHaveLength(1);
    expect(await events('ci-bot', 'KeyBudgetExhausted')).toHaveLength(1);
    expect(await events('frozen', 'KeyBudgetExhausted')).toHaveLength(1);
    expect(await events('acme', 'LowBalance')).toHaveLength(1);
  });

  it('with Redis down leaves status as it was, logs and counts the failed refresh, and keeps running', { timeout: 120_000 }, async () => {
    const before = { key: (await apiKey('ci-bot'))?.status, acct: (await account('acme'))?.status };
    const errors = await refreshes(operator, 'error');
    await redis.kill();
    await waitFor('failed refreshes counted', async () => (await refreshes(operator, 'error')) >= errors + 2, SLOW, 200);
    expect(operator.logs().some((l) => l.level === 'warn' && String(l.msg).startsWith('Spend refresh'))).toBe(true);
    expect(operator.child.exitCode).toBeNull();
    expect((await apiKey('ci-bot'))?.status).toEqual(before.key);
    expect((await account('acme'))?.status).toEqual(before.acct);
  });
});
