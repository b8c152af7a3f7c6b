import { describe, expect, it } from 'vitest';
import type { UsageEvent } from '../usage/event.ts';
import { Metrics } from './metrics.ts';

const event = (over: Partial<UsageEvent>): UsageEvent => ({
  eventId: 'e',
  createdAt: '2026-11-01T00:00:00.000Z',
  account: 'acme',
  apiKey: 'k',
  taskType: null,
  endpoint: 'chat.completions',
  requestedModel: 'm',
  servedModel: 'm',
  upstream: 'u',
  fallback: false,
  fallbackReason: null,
  status: 200,
  errorCode: null,
  stream: false,
  inputTokens: 10,
  outputTokens: 5,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costNano: 2_500_000_000,
  feeNano: 0,
  latencyMs: 12,
  ttftMs: 3,
  ...over,
});

const lines = async (m: Metrics, name: string): Promise<string[]> =>
  (await m.registry.metrics()).split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe('gateway metrics', () => {
  it("reads each account's balance from the store at scrape time", async () => {
    const m = new Metrics({ defaultMetrics: false });
    let balances = [
      { account: 'acme', balanceNano: 1_500_000_000 },
      { account: 'globex', balanceNano: -250_000_000 },
    ];
    m.watchBalances(async () => balances);
    expect(await lines(m, 'svc_gateway_account_balance_usd')).toEqual([
      'svc_gateway_account_balance_usd{account="acme"} 1.5',
      'svc_gateway_account_balance_usd{account="globex"} -0.25',
    ]);
    balances = [{ account: 'acme', balanceNano: 0 }];
    expect(await lines(m, 'svc_gateway_account_balance_usd')).toEqual(['svc_gateway_account_balance_usd{account="acme"} 0']);
  });

  it('reports no balance rather than a stale one when the store cannot answer', async () => {
    const m = new Metrics({ defaultMetrics: false });
    let fail = false;
    m.watchBalances(async () => {
      if (fail) throw new Error('store away');
      return [{ account: 'acme', balanceNano: 1e9 }];
    });
    expect(await lines(m, 'svc_gateway_account_balance_usd')).toHaveLength(1);
    fail = true;
    expect(await lines(m, 'svc_gateway_account_balance_usd')).toEqual([]);
  });

  it('counts settled spend per account beside spend per model', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.observe(event({}));
    m.observe(event({ account: 'globex', costNano: 1_000_000_000 }));
    m.observe(event({ costNano: 0, status: 429, errorCode: 'rate_limited' }));
    expect(await lines(m, 'svc_gateway_account_spend_usd_total')).toEqual([
      'svc_gateway_account_spend_usd_total{account="acme"} 2.5',
      'svc_gateway_account_spend_usd_total{account="globex"} 1',
    ]);
  });
});
