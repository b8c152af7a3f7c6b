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

describe('MCP tool call metrics', () => {
  const call = (tool: string, over: Partial<UsageEvent> = {}): UsageEvent =>
    event({
      endpoint: 'mcp',
      requestedModel: `mcp:github/${tool}`,
      servedModel: `mcp:github/${tool}`,
      upstream: 'github',
      inputTokens: 0,
      outputTokens: 0,
      ...over,
    });

  it('counts calls by server, tool and outcome, and their latency by server and outcome', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.observe(call('search', { latencyMs: 40 }));
    m.observe(call('search', { status: 200, errorCode: 'tool_error', costNano: 0 }));
    m.observe(call('search', { status: 502, errorCode: 'upstream_error', costNano: 0 }));
    m.observe(call('search', { status: 429, errorCode: 'rate_limited', costNano: 0 }));
    expect(await lines(m, 'svc_gateway_mcp_tool_calls_total')).toEqual([
      'svc_gateway_mcp_tool_calls_total{server="github",tool="search",outcome="ok"} 1',
      'svc_gateway_mcp_tool_calls_total{server="github",tool="search",outcome="tool_error"} 1',
      'svc_gateway_mcp_tool_calls_total{server="github",tool="search",outcome="upstream_error"} 1',
      'svc_gateway_mcp_tool_calls_total{server="github",tool="search",outcome="refused"} 1',
    ]);
    expect(await lines(m, 'svc_gateway_mcp_tool_call_duration_seconds_count')).toEqual([
      'svc_gateway_mcp_tool_call_duration_seconds_count{server="github",outcome="ok"} 1',
      'svc_gateway_mcp_tool_call_duration_seconds_count{server="github",outcome="tool_error"} 1',
      'svc_gateway_mcp_tool_call_duration_seconds_count{server="github",outcome="upstream_error"} 1',
      'svc_gateway_mcp_tool_call_duration_seconds_count{server="github",outcome="refused"} 1',
    ]);
  });

  it('names a tool only once its server answered a call of it, and at most 100 per server: made-up names mint no series', async () => {
    const m = new Metrics({ defaultMetrics: false });
    for (let i = 0; i < 50; i++) m.observe(call(`made-up-${i}`, { status: 200, errorCode: 'tool_error', costNano: 0 }));
    for (let i = 0; i < 150; i++) m.observe(call(`real-${i}`));
    const out = await lines(m, 'svc_gateway_mcp_tool_calls_total');
    expect(out.filter((l) => l.includes('made-up'))).toEqual([]);
    expect(out).toContain('svc_gateway_mcp_tool_calls_total{server="github",tool="_other",outcome="tool_error"} 50');
    expect(out).toContain('svc_gateway_mcp_tool_calls_total{server="github",tool="_other",outcome="ok"} 50');
    expect(out.filter((l) => l.includes('tool="real-'))).toHaveLength(100);
  });
});
