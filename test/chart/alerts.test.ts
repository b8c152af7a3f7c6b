// The chart's alerts (metrics.prometheusRule): off by default, one value turns them on, the thresholds are values
// the schema checks; and every rule, as rendered, passes `promtool check rules` and fires in `promtool test rules`
// on series this test writes: namespace "a" is in trouble on every count, namespace "b" is healthy on every count
// (just under each threshold where there is one), so each alert must fire for "a" and never for "b".
// dashboards.test.ts runs the same expressions against a real Prometheus scraping a real gateway.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { promtool } from '../helpers/promtool.ts';
import { alertsOf, renderedRules, writeRules, type RuleGroups } from './alert-rules.ts';
import { parseDocs } from './chart.ts';
import { CHART, helm, template } from './helm.ts';

let rules: RuleGroups;
let dir: string;

beforeAll(async () => {
  rules = await renderedRules();
  dir = writeRules(rules).dir;
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const NAMES = [
  'SvcGatewayUpstreamMajorOutage',
  'SvcGatewayFallbackRateHigh',
  'SvcGatewayAddedLatencyHigh',
  'SvcGatewayStoreUnavailable',
  'SvcExporterBehind',
  'SvcExporterDeadLetters',
  'SvcMoneyDrift',
  'SvcGatewayAccountBalanceLow',
  'SvcGatewayKeyBudgetNearlyUsed',
];

describe('the PrometheusRule values', () => {
  it('renders no PrometheusRule by default, one with metrics.prometheusRule.enabled=true', async () => {
    expect(parseDocs(await template('alerts')).filter((d) => d.kind === 'PrometheusRule')).toEqual([]);
    expect(alertsOf(rules).map((r) => r.alert)).toEqual(NAMES);
  });

  it('puts the thresholds of the values into the expressions', async () => {
    const values = { fallbackRatio: 0.25, addedLatencyP99Seconds: 0.2, balanceBelowUsd: 3, balanceAccounts: 'team-.*', keyBudgetRatio: 0.9, for: '2m' };
    const r = alertsOf(await renderedRules(values));
    const expr = (name: string): string => r.find((x) => x.alert === name)?.expr ?? '';
    expect(expr('SvcGatewayFallbackRateHigh')).toMatch(/> 0\.25$/);
    expect(expr('SvcGatewayAddedLatencyHigh')).toMatch(/> 0\.2$/);
    expect(expr('SvcGatewayAccountBalanceLow')).toContain('{account=~"team-.*"}) < 3');
    expect(expr('SvcGatewayKeyBudgetNearlyUsed')).toMatch(/>= 0\.9$/);
    expect(r.find((x) => x.alert === 'SvcGatewayFallbackRateHigh')?.for).toBe('2m');
  });

  it.each([
    ['metrics.prometheusRule.fallbackRatio=2', 'fallbackRatio'],
    ['metrics.prometheusRule.keyBudgetRatio=0', 'keyBudgetRatio'],
    ['metrics.prometheusRule.for=soon', 'for'],
    ['metrics.prometheusRule.treshold=1', 'treshold'],
  ])('refuses %s (values.schema.json)', async (set, field) => {
    const r = await helm(['template', 'svc', CHART, '--set', set]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(field);
  });
});

// Five-minute-old conditions, evaluated at 20m (every `for` of the defaults is 5m).
const ONE = (v: number): string => `${v}x25`;
const RISING = (perMin: number): string => `0+${perMin}x25`;
const SERIES: Array<{ series: string; values: string }> = [
  { series: 'svc_gateway_upstream_state{namespace="a",model="m",target="t1",state="major_outage"}', values: ONE(1) },
  { series: 'svc_gateway_upstream_state{namespace="a",model="m",target="t2",state="major_outage"}', values: ONE(0) },
  { series: 'svc_gateway_upstream_state{namespace="b",model="m",target="t1",state="major_outage"}', values: ONE(0) },
  { series: 'svc_gateway_upstream_state{namespace="b",model="m",target="t1",state="partial_outage"}', values: ONE(1) },
  // Fallback share: a 50%, b 9% (threshold 10%).
  { series: 'svc_gateway_fallbacks_total{namespace="a",reason="upstream_error"}', values: RISING(30) },
  { series: 'svc_gateway_requests_total{namespace="a",endpoint="chat",model="m",status="200"}', values: RISING(60) },
  { series: 'svc_gateway_fallbacks_total{namespace="b",reason="upstream_error"}', values: RISING(9) },
  { series: 'svc_gateway_requests_total{namespace="b",endpoint="chat",model="m",status="200"}', values: RISING(100) },
  // Added latency: a's p99 is about 0.1 s, b's under 5 ms (threshold 50 ms).
  { series: 'svc_gateway_added_latency_seconds_bucket{namespace="a",le="0.005"}', values: RISING(10) },
  { series: 'svc_gateway_added_latency_seconds_bucket{namespace="a",le="0.05"}', values: RISING(10) },
  { series: 'svc_gateway_added_latency_seconds_bucket{namespace="a",le="0.1"}', values: RISING(100) },
  { series: 'svc_gateway_added_latency_seconds_bucket{namespace="a",le="+Inf"}', values: RISING(100) },
  { series: 'svc_gateway_added_latency_seconds_bucket{namespace="b",le="0.005"}', values: RISING(100) },
  { series: 'svc_gateway_added_latency_seconds_bucket{namespace="b",le="0.05"}', values: RISING(100) },
  { series: 'svc_gateway_added_latency_seconds_bucket{namespace="b",le="0.1"}', values: RISING(100) },
  { series: 'svc_gateway_added_latency_seconds_bucket{namespace="b",le="+Inf"}', values: RISING(100) },
  // store_unavailable answers in a; b answers other errors only.
  { series: 'svc_gateway_errors_total{namespace="a",code="store_unavailable"}', values: RISING(6) },
  { series: 'svc_gateway_errors_total{namespace="b",code="invalid_request"}', values: RISING(60) },
  { series: 'svc_gateway_errors_total{namespace="b",code="store_unavailable"}', values: ONE(4) },
  // Exporter: a's oldest waiting event is 10 minutes old (threshold 5), b's 10 s with a small backlog.
  { series: 'svc_exporter_oldest_unexported_seconds{namespace="a"}', values: ONE(600) },
  { series: 'svc_exporter_stream_lag_entries{namespace="a"}', values: ONE(0) },
  { series: 'svc_exporter_oldest_unexported_seconds{namespace="b"}', values: ONE(10) },
  { series: 'svc_exporter_stream_lag_entries{namespace="b"}', values: ONE(99_999) },
  // Dead letters: one in a at minute 15; b's counter never moves.
  { series: 'svc_exporter_dead_letters_total{namespace="a",reason="rejected"}', values: '0x15 1x10' },
  { series: 'svc_exporter_dead_letters_total{namespace="b",reason="rejected"}', values: ONE(3) },
  // Money drift: a's acme spent 0.5 USD less in Redis than in the ledger; b's globex agrees.
  { series: 'svc_money_drift_usd{namespace="a",account="acme",field="spent"}', values: ONE(-0.5) },
  { series: 'svc_money_drift_usd{namespace="a",account="acme",field="credited"}', values: ONE(0) },
  { series: 'svc_money_drift_usd{namespace="b",account="globex",field="spent"}', values: ONE(0) },
  // Balances: a's acme has 3 USD (threshold 10), b's globex 10.
  { series: 'svc_gateway_account_balance_usd{namespace="a",account="acme"}', values: ONE(3) },
  { series: 'svc_gateway_account_balance_usd{namespace="b",account="globex"}', values: ONE(10) },
  // Key budgets: a's k1 used 85% (threshold 80%), b's k2 79%.
  { series: 'svc_gateway_key_budget_used_ratio{namespace="a",account="acme",key="k1"}', values: ONE(0.85) },
  { series: 'svc_gateway_key_budget_used_ratio{namespace="b",account="globex",key="k2"}', values: ONE(0.79) },
];

/** Each alert's expected labels (namespace a only) and annotations at 20m. */
const EXPECTED: Record<string, Array<{ exp_labels: Record<string, string>; exp_annotations: Record<string, string> }>> = {
  SvcGatewayUpstreamMajorOutage: [
    {
      exp_labels: { severity: 'critical', namespace: 'a', model: 'm', target: 't1' },
      exp_annotations: {
        summary: 'Upstream t1 of model m is in major outage',
        description: 'Its probes or at least half of its live calls fail; calls go to its fallbacks (see /status).',
      },
    },
  ],
  SvcGatewayFallbackRateHigh: [
    {
      exp_labels: { severity: 'warning', namespace: 'a' },
      exp_annotations: { summary: '50% of calls were served after a fallback', description: 'See svc_gateway_fallbacks_total by reason.' },
    },
  ],
  SvcGatewayAddedLatencyHigh: [
    {
      exp_labels: { severity: 'warning', namespace: 'a' },
      exp_annotations: {
        summary: 'p99 time in the gateway before the upstream request is 99.44ms',
        description: 'Key check, rate limits, budget hold and routing take longer than 0.05 s at p99 (Redis latency?).',
      },
    },
  ],
  SvcGatewayStoreUnavailable: [
    {
      exp_labels: { severity: 'critical', namespace: 'a' },
      exp_annotations: {
        summary: 'The gateway answers 503 store_unavailable (100m/s)',
        description: 'It cannot reach Redis or has no configuration yet: calls are refused (fail closed).',
      },
    },
  ],
  SvcExporterBehind: [
    {
      exp_labels: { severity: 'warning', namespace: 'a' },
      exp_annotations: {
        summary: 'Usage events wait for Postgres (600)',
        description: 'The usage exporter is behind: statements and the spend dashboards lag the calls.',
      },
    },
  ],
  SvcExporterDeadLetters: [
    {
      exp_labels: { severity: 'critical', namespace: 'a' },
      exp_annotations: {
        summary: '1 usage events parked in usage_dead_letters',
        description: 'Postgres rejected them: read usage_dead_letters, fix, and replay them.',
      },
    },
  ],
  SvcMoneyDrift: [
    {
      exp_labels: { severity: 'critical', namespace: 'a', account: 'acme', field: 'spent' },
      exp_annotations: {
        summary: "Account acme: Redis's spent is 0.5 USD off the Postgres ledger",
        description:
          "Redis (what admission reads) and the ledger disagree: see the exporter's 'Money drift' log line and the operations guide (Redis lost its data: reconciliation).",
      },
    },
  ],
  SvcGatewayAccountBalanceLow: [
    {
      exp_labels: { severity: 'warning', namespace: 'a', account: 'acme' },
      exp_annotations: {
        summary: 'Account acme has 3 USD left',
        description: 'Below 10 USD: its calls are refused with insufficient_balance once it is spent.',
      },
    },
  ],
  SvcGatewayKeyBudgetNearlyUsed: [
    {
      exp_labels: { severity: 'warning', namespace: 'a', account: 'acme', key: 'k1' },
      exp_annotations: {
        summary: 'Key acme/k1 used 85% of its monthly budget',
        description: 'At 100% its calls are refused with budget_exceeded until the month ends or the budget is raised.',
      },
    },
  ],
};

describe('promtool on the rendered rules', () => {
  it('check rules: valid, no lint finding', async () => {
    const r = await promtool(['check', 'rules', join(dir, 'rules.yaml')]);
    expect(r.output).toContain(`SUCCESS: ${NAMES.length} rules found`);
    expect(r.output).not.toMatch(/WARNING|FAILED/);
    expect(r.code).toBe(0);
  });

  it('test rules: each alert fires for the namespace in trouble and never for the healthy one', async () => {
    const test = {
      rule_files: ['rules.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: SERIES,
          alert_rule_test: NAMES.map((alertname) => ({ eval_time: '20m', alertname, exp_alerts: EXPECTED[alertname] })),
        },
        // Before any condition has lasted `for` (5m), nothing with a `for` fires.
        {
          interval: '1m',
          input_series: SERIES,
          alert_rule_test: NAMES.filter((n) => alertsOf(rules).find((r) => r.alert === n)?.for).map((alertname) => ({
            eval_time: '3m',
            alertname,
            exp_alerts: [],
          })),
        },
      ],
    };
    writeFileSync(join(dir, 'test.yaml'), stringify(test));
    const r = await promtool(['test', 'rules', join(dir, 'test.yaml')]);
    expect(r.output, r.output).toContain('SUCCESS');
    expect(r.code).toBe(0);
  });
});
