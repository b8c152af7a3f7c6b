// The Grafana dashboards the chart ships, run as Grafana would run them. One gateway process (standalone, Redis +
// Postgres, so the usage exporter runs in it and its metrics are on the same /metrics) takes mixed traffic: successes,
// streams, fallbacks, upstream errors, cut streams, client aborts, rate-limited and budget-refused calls. A real
// Prometheus scrapes its metrics port (SVC_METRICS_PORT, as the ServiceMonitor does): every PromQL query of
// traffic.json returns data (MCP tool calls through the built-in mock McpServer, and legacy completions, rerank and
// moderation calls through the mock provider, included). Every SQL query of spend.json runs on the
// real schema and returns the sums computed independently from the raw usage_events rows.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream } from '../fakes/upstream.ts';
import { rowCounts, waitFor } from '../helpers/exporter.ts';
import { FLEET_PEPPER, writeManifests } from '../helpers/fleet.ts';
import { apiKey, mcpServer, route } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { callOfKind, mixedTraffic, script, trafficManifests, type CallOutcome, type Upstreams } from '../helpers/usage-traffic.ts';
import { alertsOf, renderedRules } from './alert-rules.ts';
import { CHART } from './helm.ts';
import { startPrometheus, type TestPrometheus } from './prometheus.ts';

interface Target {
  refId: string;
  expr?: string;
  rawSql?: string;
}
interface Panel {
  title: string;
  type: string;
  targets?: Target[];
}
interface Dashboard {
  uid: string;
  panels: Panel[];
}

const dashboard = (name: string): Dashboard => JSON.parse(readFileSync(join(CHART, 'dashboards', `${name}.json`), 'utf8')) as Dashboard;
const targets = (d: Dashboard, field: 'expr' | 'rawSql'): Array<{ title: string; refId: string; text: string }> =>
  d.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => (t[field] ? [{ title: p.title, refId: t.refId, text: t[field] }] : [])));

let redis: TestRedis;
let db: TestPostgres;
let u: Upstreams;
let gw: GatewayProcess;
let prom: TestPrometheus;
const calls: CallOutcome[] = [];
/** MCP tool calls made (each one usage event), and those the tool answered with isError. */
const mcp = { calls: 0, toolErrors: 0 };
/** Calls of the kinds beyond chat made (completions, rerank, moderation: each one usage event). */
let otherKinds = 0;

/** One call of each kind beyond chat, on the mock provider's models of those kinds. */
async function otherKindCalls(url: string, key: string, i: number): Promise<void> {
  const bodies: Array<[string, object]> = [
    ['/v1/completions', { model: 'text-m', prompt: `def f${i}():`, max_tokens: 8 }],
    ['/v1/rerank', { model: 'rerank-m', query: `query ${i}`, documents: ['one document', 'another document', `document ${i}`] }],
    ['/v1/moderations', { model: 'moderation-m', input: `a calm sentence ${i}` }],
  ];
  for (const [path, body] of bodies) {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, path).toBe(200);
    await res.arrayBuffer();
    otherKinds++;
  }
}

async function toolCall(url: string, key: string, args: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${url}/mcp/demo-tools`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: args } }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result?: { isError?: boolean } };
  mcp.calls++;
  if (body.result?.isError) mcp.toolErrors++;
}

/** Calls a Guardrail matches: two emails masked in one call, a secret blocked in another (each one usage event). */
async function guardedCalls(url: string, key: string, i: number): Promise<void> {
  for (const [content, status] of [
    [`write to jane${i}@example.com and joe${i}@example.com`, 200],
    [`deploy with AKIAZ7Q3XKQ4PLMNB2WE (${i})`, 400],
  ] as const) {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'guarded-m', messages: [{ role: 'user', content }] }),
    });
    await res.arrayBuffer();
    expect(res.status).toBe(status);
    otherKinds++;
  }
}

beforeAll(async () => {
  const [primary, secondary, backup] = await Promise.all([startFakeUpstream('primary'), startFakeUpstream('secondary'), startFakeUpstream('backup')]);
  u = { primary, secondary, backup };
  script(u);
  [redis, db] = await Promise.all([startRedis('dashboards'), startPostgres('dashboards')]);
  const m = trafficManifests(u);
  const capped = apiKey('capped', 'globex', { monthlyBudgetUsd: 0.000001 });
  // A budget its calls use a little of (the alert test lowers the budget alert's threshold under its share).
  const budgeted = apiKey('budgeted', 'globex', { monthlyBudgetUsd: 0.01 });
  gw = await startGatewayProcess({
    SVC_CONFIG: writeManifests([
      ...m.docs,
      ...capped.docs,
      ...budgeted.docs,
      mcpServer('demo-tools', { mock: {}, pricing: { perCallUsd: 0.0001 } }),
      route('text-m', [{ name: 'mock-text', provider: 'mock' }], { type: 'completions' }),
      route('rerank-m', [{ name: 'mock-rerank', provider: 'mock' }], { type: 'rerank', pricing: { inputPerMTokUsd: 0.05, perSearchUnitUsd: 0.002 } }),
      route('moderation-m', [{ name: 'mock-moderation', provider: 'mock' }], { type: 'moderation', pricing: { inputPerMTokUsd: 0.1 } }),
      route('guarded-m', [{ name: 'mock-guarded', provider: 'mock' }]),
      {
        apiVersion: 'gateway.svc.dev/v1alpha1',
        kind: 'Guardrail',
        metadata: { name: 'company-data' },
        spec: {
          selector: { models: ['guarded-m'] },
          checks: [
            { detector: 'secrets', action: 'block' },
            { detector: 'email', action: 'mask' },
          ],
        },
      },
    ]),
    REDIS_URL: redis.url,
    SVC_REDIS_PREFIX: redis.prefix,
    SVC_KEY_PEPPER: FLEET_PEPPER,
    DATABASE_URL: db.url,
  });
  prom = await startPrometheus([new URL(gw.metricsUrl).host], { namespace: 'svc', container: 'gateway', pod: 'gateway-0' });
  // Two waves a few scrapes apart, so every counter is seen before and after it grows (rate() > 0).
  for (let wave = 0; wave < 2; wave++) {
    calls.push(...(await mixedTraffic([gw.url], m.keys, 60)));
    for (let i = 0; i < 3; i++) calls.push(await callOfKind(gw.url, capped.key, 'ok', i));
    for (let i = 0; i < 3; i++) calls.push(await callOfKind(gw.url, budgeted.key, 'ok', i));
    for (let i = 0; i < 3; i++) await toolCall(gw.url, m.keys.a1, { a: i, b: 2 });
    await toolCall(gw.url, m.keys.a1, { a: 'not a number', b: 2 });
    for (let i = 0; i < 2; i++) await otherKindCalls(gw.url, m.keys.a2, i);
    await guardedCalls(gw.url, m.keys.a2, wave);
    const seen = await prom.scrapes();
    await waitFor(async () => (await prom.scrapes()) >= seen + 3, 20_000, 'three more scrapes');
  }
  await waitFor(async () => (await rowCounts(db.pool)).rows >= calls.length + mcp.calls + otherKinds, 30_000, 'every call exported to Postgres');
  const seen = await prom.scrapes();
  await waitFor(async () => (await prom.scrapes()) >= seen + 2, 20_000, 'two scrapes after the export');
}, 180_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.allSettled([prom?.stop(), redis?.stop(), db?.stop(), u?.primary.close(), u?.secondary.close(), u?.backup.close()]);
});

/** Grafana's variables as the dashboard would fill them: every namespace, a rate window of a few scrapes. */
function promql(expr: string): string {
  const out = expr.replaceAll('$namespace', '.*').replaceAll('$__rate_interval', '1m');
  if (out.includes('$')) throw new Error(`a variable the test does not fill: ${out}`);
  return out;
}

describe('PromQL of traffic.json, against Prometheus scraping a gateway under traffic', () => {
  // Values that are rightly 0 under this traffic (nothing waits for export, nothing was a dead letter).
  const MAY_BE_ZERO = new Set(['Oldest usage event not yet in Postgres/A', 'Usage rows written/B']);

  it('returns data for every query, above 0 unless 0 is the right answer', async () => {
    const all = targets(dashboard('traffic'), 'expr');
    expect(all.length).toBeGreaterThan(20);
    const report: string[] = [];
    for (const t of all) {
      const samples = await prom.query(promql(t.text));
      const values = samples.map((s) => Number(s.value[1]));
      report.push(`${t.title}/${t.refId}: ${samples.length} series, ${values.map((v) => (Number.isFinite(v) ? +v.toPrecision(3) : v)).join(' ')}`);
      expect(samples.length, `${t.title}/${t.refId}: ${t.text}`).toBeGreaterThan(0);
      expect(
        values.some((v) => Number.isFinite(v)),
        `${t.title}/${t.refId}: ${values.join(',')}`,
      ).toBe(true);
      if (!MAY_BE_ZERO.has(`${t.title}/${t.refId}`))
        expect(
          values.some((v) => v > 0),
          `${t.title}/${t.refId}: ${values.join(',')}`,
        ).toBe(true);
    }
    console.log(`${all.length} PromQL queries, each with data:\n${report.join('\n')}`);
  });

  it('counts the same tokens in the GenAI token histogram as in our own counter', async () => {
    for (const direction of ['input', 'output']) {
      const genai = await prom.query(`sum(gen_ai_client_token_usage_sum{gen_ai_token_type="${direction}"})`);
      const ours = await prom.query(`sum(svc_gateway_tokens_total{direction="${direction}"})`);
      expect(Number(genai[0]?.value[1])).toBeGreaterThan(0);
      expect(genai[0]?.value[1]).toBe(ours[0]?.value[1]);
    }
  });

  it('counts the MCP tool calls by server, tool and outcome, as they were made', async () => {
    const byOutcome = await prom.query('sum by (server, tool, outcome) (svc_gateway_mcp_tool_calls_total)');
    expect(byOutcome.map((s) => [s.metric.server, s.metric.tool, s.metric.outcome, Number(s.value[1])]).sort()).toEqual(
      [
        ['demo-tools', 'add', 'ok', mcp.calls - mcp.toolErrors],
        ['demo-tools', 'add', 'tool_error', mcp.toolErrors],
      ].sort(),
    );
    const latency = await prom.query('sum(svc_gateway_mcp_tool_call_duration_seconds_count)');
    expect(Number(latency[0]?.value[1])).toBe(mcp.calls);
  });

  it('sees the refusals the traffic caused, by reason', async () => {
    const refused = await prom.query('sum by (reason) (svc_gateway_budget_refused_total)');
    expect(refused.map((s) => s.metric.reason)).toEqual(['budget_exceeded']);
    expect(Number(refused[0]?.value[1])).toBe(calls.filter((c) => c.status === 402).length);
    expect(Number((await prom.query('sum(svc_gateway_rate_limited_total)'))[0]?.value[1])).toBe(calls.filter((c) => c.status === 429).length);
  });
});

describe("the chart's alert expressions, against Prometheus scraping a gateway under traffic", () => {
  // Thresholds this traffic crosses (fallbacks, time in the gateway, every balance, the capped key's budget); the
  // rest are the defaults, which a healthy gateway stays under (Redis up, the exporter keeping up, no dead letter).
  const LOW = { fallbackRatio: 0.01, addedLatencyP99Seconds: 0.000001, balanceBelowUsd: 1_000_000_000, keyBudgetRatio: 0.001 };
  const FIRING = ['SvcGatewayFallbackRateHigh', 'SvcGatewayAddedLatencyHigh', 'SvcGatewayAccountBalanceLow', 'SvcGatewayKeyBudgetNearlyUsed'];
  const QUIET = ['SvcGatewayStoreUnavailable', 'SvcExporterBehind', 'SvcExporterDeadLetters', 'SvcMoneyDrift'];

  it('every metric a rule reads is exported by the gateway (or its in-process exporter)', async () => {
    const families = new Set([...(await (await fetch(`${gw.metricsUrl}/metrics`)).text()).matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]));
    const read = alertsOf(await renderedRules()).flatMap((r) => [...r.expr.matchAll(/\b(svc_\w+?)(?:_bucket)?\b(?=[{[)\s])/g)].map((m) => m[1] as string));
    expect(read.length).toBeGreaterThan(8);
    expect([...new Set(read)].filter((m) => !families.has(m))).toEqual([]);
  });

  it('each expression evaluates; the crossed thresholds fire, for the right series, the others stay quiet', async () => {
    const rules = alertsOf(await renderedRules(LOW));
    const report: string[] = [];
    const fired: Record<string, Array<Record<string, string>>> = {};
    for (const r of rules) {
      const samples = await prom.query(r.expr);
      fired[r.alert] = samples.map((s) => s.metric);
      report.push(`${r.alert}: ${samples.map((s) => `${JSON.stringify(s.metric)}=${+Number(s.value[1]).toPrecision(3)}`).join(' ') || 'quiet'}`);
    }
    console.log(`${rules.length} alert expressions:\n${report.join('\n')}`);
    for (const a of FIRING) expect(fired[a]?.length, `${a} fires`).toBeGreaterThan(0);
    for (const a of QUIET) expect(fired[a], `${a} stays quiet`).toEqual([]);
    // The budgeted key spent more than 0.1% of its budget; the capped one was refused before it spent anything.
    expect(fired.SvcGatewayKeyBudgetNearlyUsed).toEqual([{ namespace: 'svc', account: 'globex', key: 'budgeted' }]);
    const ratio = await prom.query('max by (key) (svc_gateway_key_budget_used_ratio)');
    const spent = await db.pool.query<{ nano: string }>("SELECT sum(cost_nano)::text AS nano FROM usage_events WHERE api_key = 'budgeted'");
    expect(Object.fromEntries(ratio.map((s) => [s.metric.key, Number(s.value[1])]))).toEqual({ capped: 0, budgeted: Number(spent.rows[0]?.nano) / 1e7 });
    const ledger = (await db.pool.query<{ account: string }>('SELECT account FROM account_ledger ORDER BY account')).rows.map((r) => r.account);
    expect(fired.SvcGatewayAccountBalanceLow?.map((m) => m.account).sort()).toEqual(ledger);
    // The outage rule reads the states this gateway got from its probes: one per target and state (the McpServer's
    // one, the completions, rerank and moderation routes' three, and the guarded route's one).
    expect((await prom.query('count(svc_gateway_upstream_state)'))[0]?.value[1]).toBe(String(8 * 5));
  });
});

/** Grafana's $__timeFrom() and $__timeTo(): quoted RFC 3339 times, here from the start of yesterday (UTC) to now. */
function sql(text: string, from: Date, to: Date): string {
  const iso = (d: Date): string => `'${d.toISOString().replace(/\.\d{3}Z$/, 'Z')}'`;
  const out = text.replaceAll('$__timeFrom()', iso(from)).replaceAll('$__timeTo()', iso(to));
  if (out.includes('$')) throw new Error(`a macro or variable the test does not fill: ${out}`);
  return out;
}

const DAY = "(created_at AT TIME ZONE 'UTC')::date";
const IN_RANGE = `${DAY} BETWEEN $1::date AND $2::date`;
/** The same answers from the raw rows (usage_events, ledger_credits), not from the rollup and views the panels read. */
const EXPECTED: Record<string, string> = {
  'Spend in range': `SELECT sum(cost_usd) AS spend_usd, count(*) AS requests FROM usage_events WHERE ${IN_RANGE}`,
  'Fallback rate in range': `SELECT round((count(*) FILTER (WHERE fallback))::numeric / nullif(count(*), 0), 4) AS fallback_rate FROM usage_events WHERE ${IN_RANGE}`,
  Balances: `WITH c AS (SELECT account, sum(amount_nano) AS cr FROM ledger_credits GROUP BY account),
    s AS (SELECT account, sum(cost_nano) AS sp, count(*) AS n FROM usage_events GROUP BY account)
    SELECT account, (coalesce(cr, 0) / 1e9)::numeric(20, 9) AS credited_usd, (coalesce(sp, 0) / 1e9)::numeric(20, 9) AS spent_usd,
      ((coalesce(cr, 0) - coalesce(sp, 0)) / 1e9)::numeric(20, 9) AS balance_usd, coalesce(n, 0) AS requests
    FROM c FULL JOIN s USING (account) ORDER BY account`,
  'Spend per day by model': `SELECT ${DAY}::timestamptz AS time, coalesce(served_model, requested_model) AS metric, sum(cost_usd) AS spend_usd
    FROM usage_events WHERE ${IN_RANGE} GROUP BY 1, 2 ORDER BY 1, 2`,
  'Spend by model': `SELECT coalesce(served_model, requested_model) AS model, count(*) AS requests, count(*) FILTER (WHERE fallback) AS fallbacks,
      sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd
    FROM usage_events WHERE ${IN_RANGE} GROUP BY 1 ORDER BY cost_usd DESC, model`,
  'Spend per day by key': `SELECT ${DAY}::timestamptz AS time, account || '/' || api_key AS metric, sum(cost_usd) AS spend_usd
    FROM usage_events WHERE ${IN_RANGE} GROUP BY 1, 2 ORDER BY 1, 2`,
  'Spend by key': `SELECT account, api_key, count(*) AS requests, count(*) FILTER (WHERE status >= 400) AS errors,
      sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd
    FROM usage_events WHERE ${IN_RANGE} GROUP BY 1, 2 ORDER BY cost_usd DESC, account, api_key`,
  'Spend per day by task': `SELECT ${DAY}::timestamptz AS time, coalesce(task_type, '(none)') AS metric, sum(cost_usd) AS spend_usd
    FROM usage_events WHERE ${IN_RANGE} GROUP BY 1, 2 ORDER BY 1, 2`,
  'Spend by task': `SELECT account, coalesce(task_type, '(none)') AS task_type, count(*) AS requests, sum(cost_usd) AS cost_usd
    FROM usage_events WHERE ${IN_RANGE} GROUP BY 1, 2 ORDER BY cost_usd DESC, account, task_type`,
  'Spend by kind of call': `SELECT CASE endpoint WHEN 'moderations' THEN 'moderation' WHEN 'chat.completions' THEN 'chat' WHEN 'messages' THEN 'chat'
        WHEN 'responses' THEN 'chat' WHEN 'count_tokens' THEN 'chat' ELSE endpoint END AS kind,
      count(*) AS requests, count(*) FILTER (WHERE status >= 400) AS errors, sum(input_tokens) AS input_tokens,
      coalesce(sum(output_tokens) FILTER (WHERE endpoint <> 'rerank'), 0) AS output_tokens,
      coalesce(sum(output_tokens) FILTER (WHERE endpoint = 'rerank'), 0) AS search_units,
      coalesce(sum(billed_units) FILTER (WHERE billed_unit = 'seconds'), 0) AS audio_seconds,
      coalesce(sum(billed_units) FILTER (WHERE billed_unit = 'characters'), 0) AS characters,
      coalesce(sum(billed_units) FILTER (WHERE billed_unit = 'images'), 0) AS images,
      count(*) FILTER (WHERE batch) AS batch_requests, coalesce(sum(cost_usd) FILTER (WHERE batch), 0) AS batch_cost_usd, sum(cost_usd) AS cost_usd
    FROM usage_events WHERE ${IN_RANGE} GROUP BY 1 ORDER BY cost_usd DESC, kind`,
  'Guardrail blocks and masks by key': `SELECT account, api_key, g.guardrail, count(*) FILTER (WHERE g.action = 'block') AS blocked,
      coalesce(sum(g.count) FILTER (WHERE g.action = 'mask'), 0) AS masked, coalesce(sum(g.count) FILTER (WHERE g.action = 'log'), 0) AS logged
    FROM usage_events, jsonb_to_recordset(guardrails) AS g(guardrail text, action text, count bigint)
    WHERE ${IN_RANGE} GROUP BY 1, 2, 3 ORDER BY blocked DESC, masked DESC, account, api_key, guardrail`,
  'Fallbacks per day by reason': `SELECT ${DAY}::timestamptz AS time, fallback_reason AS metric, count(*) FILTER (WHERE fallback) AS fallbacks
    FROM usage_events WHERE ${IN_RANGE} AND fallback_reason IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2`,
  'Fallbacks by requested model and reason': `SELECT requested_model, coalesce(served_model, '') AS served_model, fallback_reason AS reason,
      count(*) FILTER (WHERE fallback) AS fallbacks
    FROM usage_events WHERE ${IN_RANGE} AND fallback_reason IS NOT NULL GROUP BY 1, 2, 3 ORDER BY fallbacks DESC, requested_model, served_model, reason`,
};

/** Rows with numbers as numbers (pg returns numeric and bigint as text) and times as ISO strings. */
function normal(rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return rows.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v]),
    ),
  );
}

describe('SQL of spend.json, against the real schema', () => {
  it('returns the sums computed from the raw rows, for every panel', async () => {
    const all = targets(dashboard('spend'), 'rawSql');
    expect(all.map((t) => t.title).sort()).toEqual(Object.keys(EXPECTED).sort());
    const from = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() - 1));
    const to = new Date();
    const days = [from.toISOString().slice(0, 10), to.toISOString().slice(0, 10)];
    const report: string[] = [];
    for (const t of all) {
      const got = normal((await db.pool.query(sql(t.text, from, to))).rows as Array<Record<string, unknown>>);
      const want = normal(
        (await db.pool.query(EXPECTED[t.title] as string, EXPECTED[t.title]?.includes('$1') ? days : [])).rows as Array<Record<string, unknown>>,
      );
      expect(got.length, t.title).toBeGreaterThan(0);
      expect(got, t.title).toEqual(want);
      report.push(`${t.title}: ${got.length} rows`);
    }
    const total = (await db.pool.query<{ usd: string; n: string }>('SELECT sum(cost_usd)::text AS usd, count(*)::text AS n FROM usage_events')).rows[0];
    console.log(`${all.length} SQL queries equal to the raw-row sums (${total?.n} calls, ${total?.usd} USD):\n${report.join('\n')}`);
    expect(Number(total?.n)).toBe(calls.length + mcp.calls + otherKinds);
  });

  it('tells the kinds of call apart, each in its units: a rerank counts search units, not output tokens', async () => {
    const panel = targets(dashboard('spend'), 'rawSql').find((t) => t.title === 'Spend by kind of call');
    const from = new Date(Date.now() - 86_400_000);
    const rows = normal((await db.pool.query(sql(panel?.text ?? '', from, new Date()))).rows as Array<Record<string, unknown>>);
    const byKind = Object.fromEntries(rows.map((r) => [r.kind as string, r]));
    expect(Object.keys(byKind).sort()).toEqual(['chat', 'completions', 'mcp', 'moderation', 'rerank']);
    // Four reranks of three documents: one search unit each.
    expect(byKind.rerank).toMatchObject({ requests: 4, output_tokens: 0, search_units: 4 });
    expect(byKind.completions).toMatchObject({ requests: 4, search_units: 0 });
    expect((byKind.completions?.output_tokens as number) > 0).toBe(true);
    expect(byKind.moderation).toMatchObject({ requests: 4, output_tokens: 0, search_units: 0 });
    expect(byKind.mcp?.requests).toBe(mcp.calls);
  });

  it('counts the guardrail blocks and masks by key as the calls were made, as the metric does by guardrail and action', async () => {
    const panel = targets(dashboard('spend'), 'rawSql').find((t) => t.title === 'Guardrail blocks and masks by key');
    const now = new Date();
    const rows = normal((await db.pool.query(sql(panel?.text ?? '', new Date(now.getTime() - 86_400_000), now))).rows as Array<Record<string, unknown>>);
    expect(rows).toEqual([{ account: 'acme', api_key: 'a2', guardrail: 'company-data', blocked: 2, masked: 4, logged: 0 }]);
    const byAction = await prom.query('sum by (guardrail, action) (svc_gateway_guardrail_matches_total)');
    expect(Object.fromEntries(byAction.map((s) => [`${s.metric.guardrail}/${s.metric.action}`, Number(s.value[1])]))).toEqual({
      'company-data/block': 2,
      'company-data/mask': 4,
    });
  });

  it("agrees with Prometheus: spend, and each account's balance", async () => {
    const spent = Number((await db.pool.query<{ usd: string }>('SELECT sum(cost_usd)::text AS usd FROM usage_events')).rows[0]?.usd);
    const promSpent = Number((await prom.query('sum(svc_gateway_spend_usd_total)'))[0]?.value[1]);
    expect(promSpent).toBeCloseTo(spent, 9);
    const ledger = (await db.pool.query<{ account: string; balance_usd: string }>('SELECT account, balance_usd FROM account_ledger ORDER BY account')).rows;
    const gauge = await prom.query('max by (account) (svc_gateway_account_balance_usd)');
    const byAccount = Object.fromEntries(gauge.map((s) => [s.metric.account, Number(s.value[1])]));
    expect(Object.keys(byAccount).sort()).toEqual(ledger.map((r) => r.account));
    for (const r of ledger) expect(byAccount[r.account]).toBeCloseTo(Number(r.balance_usd), 9);
  });
});
