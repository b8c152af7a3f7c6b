// Prometheus metrics of the gateway (docs/operations.md: Metrics; every metric in docs/reference/metrics.md). Labels stay bounded: endpoint, configured model
// ids, status class, fallback reason, configured account names; never key values or task_type.
import { Counter, Gauge, Histogram, Registry, type RegistryContentType } from 'prom-client';
import { FastCounter, FastHistogram } from './fast-metrics.ts';
import { NANO_PER_USD } from '../contract/money.ts';
import type { ClampReason } from '../pipeline/bound-usage.ts';
import { collectProcessMetrics } from '../lifecycle/process-metrics.ts';
import { AlertMetrics } from './alert-metrics.ts';
import { GenAiMetrics } from './genai-metrics.ts';
import type { CompiledTarget, KeyRecord } from '../contract/snapshot.ts';
import { exemplarOf, observe } from './exemplars.ts';
import { CacheMetrics } from './cache-metrics.ts';
import { McpMetrics } from './mcp-metrics.ts';
import { watchLeases, type LeaseSource } from './lease-metrics.ts';
import type { CacheCount } from '../pipeline/context.ts';
import type { KeyLookupResult } from '../pipeline/key-cache.ts';
import type { GuardrailFact, UsageEvent } from '../usage/event.ts';

export interface AccountBalance {
  account: string;
  balanceNano: number;
}

export class Metrics {
  readonly registry: Registry;
  private readonly requests: Counter;
  private readonly tokens: Counter;
  private readonly spend: Counter;
  private readonly fallbacks: Counter;
  private readonly rateLimited: Counter;
  private readonly refused: Counter;
  private readonly clamped: Counter;
  private readonly estimated: Counter;
  private readonly latency: Histogram;
  private readonly ttft: Histogram;
  private readonly accountSpend: Counter;
  private readonly balance: Gauge;
  private readonly errors: Counter;
  private readonly added: Histogram;
  /** Upstream states and key budgets, read at scrape time (alert-metrics.ts). */
  readonly alerts: AlertMetrics;
  private readonly genai: GenAiMetrics;
  private readonly caching: CacheMetrics;
  private readonly mcp: McpMetrics;
  private readonly guardMatches: Counter;
  private readBalances: (() => Promise<AccountBalance[]>) | null = null;

  /** Latency histograms carry the call's trace id as an exemplar (tracing on; shown to OpenMetrics scrapes). */
  readonly exemplars: boolean;

  constructor(opts: { defaultMetrics?: boolean; exemplars?: boolean } = {}) {
    const enableExemplars = opts.exemplars === true;
    this.exemplars = enableExemplars;
    // prom-client takes exemplars only on an OpenMetrics registry; scrapes still get the text format they ask for.
    this.registry = new Registry();
    if (enableExemplars) (this.registry as unknown as Registry<RegistryContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const registers = [this.registry];
    if (opts.defaultMetrics !== false) collectProcessMetrics(this.registry);
    this.guardMatches = new Counter({
      name: 'svc_gateway_guardrail_matches_total',
      help: 'Guardrail matches by guardrail, check, action (block, mask, log), stage (request, response) and kind found (email, aws-access-key, a regex name); never the text.',
      labelNames: ['guardrail', 'check', 'action', 'stage', 'kind'],
      registers,
    });
    this.requests = new FastCounter({
      name: 'svc_gateway_requests_total',
      help: 'Model calls by endpoint, model and status.',
      labelNames: ['endpoint', 'model', 'status'],
      registers,
    });
    this.tokens = new FastCounter({
      name: 'svc_gateway_tokens_total',
      help: 'Tokens served by model and direction.',
      labelNames: ['model', 'direction'],
      registers,
    });
    this.spend = new FastCounter({ name: 'svc_gateway_spend_usd_total', help: 'Settled spend in USD by served model.', labelNames: ['model'], registers });
    this.fallbacks = new Counter({
      name: 'svc_gateway_fallbacks_total',
      help: 'Calls served or failed after a fallback, by reason.',
      labelNames: ['reason'],
      registers,
    });
    this.rateLimited = new Counter({ name: 'svc_gateway_rate_limited_total', help: 'Calls refused by RPM/TPM limits.', labelNames: ['endpoint'], registers });
    this.refused = new Counter({ name: 'svc_gateway_budget_refused_total', help: 'Calls refused for budget or balance.', labelNames: ['reason'], registers });
    this.clamped = new Counter({
      name: 'svc_gateway_usage_clamped_total',
      help: 'Upstream usage reports above what the call could have used, cut to its bound, by direction (input, output).',
      labelNames: ['reason'],
      registers,
    });
    this.estimated = new Counter({
      name: 'svc_gateway_usage_estimated_total',
      help: 'Served calls whose upstream reported no usable usage and were charged an estimate, by endpoint.',
      labelNames: ['endpoint'],
      registers,
    });
    const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
    this.latency = new FastHistogram({
      name: 'svc_gateway_request_duration_seconds',
      help: 'Call latency to the last byte.',
      labelNames: ['endpoint', 'model'],
      buckets,
      registers,
      enableExemplars,
    });
    this.ttft = new FastHistogram({
      name: 'svc_gateway_time_to_first_token_seconds',
      help: 'Time to the first byte of the answer.',
      labelNames: ['endpoint', 'model'],
      buckets,
      registers,
      enableExemplars,
    });
    this.accountSpend = new FastCounter({
      name: 'svc_gateway_account_spend_usd_total',
      help: 'Settled spend in USD by account (accounts are bounded by config).',
      labelNames: ['account'],
      registers,
    });
    this.balance = new Gauge({
      name: 'svc_gateway_account_balance_usd',
      help: 'Prepaid balance in USD by account (credited - spent), read from the store at each scrape.',
      labelNames: ['account'],
      registers,
      collect: () => this.collectBalances(),
    });
    this.errors = new FastCounter({
      name: 'svc_gateway_errors_total',
      help: "Error answers sent before an answer started, by the error catalog's code (e.g. store_unavailable).",
      labelNames: ['code'],
      registers,
    });
    this.added = new FastHistogram({
      name: 'svc_gateway_added_latency_seconds',
      help: 'Time a call spent in the gateway before its first upstream request (key, limits, budget hold, routing).',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    });
    this.alerts = new AlertMetrics(this.registry);
    this.genai = new GenAiMetrics(this.registry, enableExemplars);
    this.caching = new CacheMetrics(this.registry);
    this.mcp = new McpMetrics(this.registry, enableExemplars);
  }

  /** What became of the sampled spans, when tracing is on (gateway/tracing/bounded.ts). */
  watchSpans(counts: { exported: number; failed: number; dropped: number }): void {
    new Counter({
      name: 'svc_gateway_trace_spans_total',
      help: 'Sampled trace spans by result: exported, failed (collector refused or unreachable), dropped (queue full).',
      labelNames: ['result'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const result of ['exported', 'failed', 'dropped'] as const) this.inc({ result }, counts[result]);
      },
    });
  }

  /** Key lookups by result and the keys held, read at each scrape (pipeline/key-cache.ts). */
  watchKeyCache(cache: { readonly size: number; readonly counts: Record<KeyLookupResult, number> }): void {
    new Counter({
      name: 'svc_gateway_key_lookups_total',
      help: 'API key lookups by result: hit (cached), miss (read from the store), unknown (read, no such key), unknown_cached (an unknown key seen within the last second: no store read).',
      labelNames: ['result'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const result of ['hit', 'miss', 'unknown', 'unknown_cached'] as const) this.inc({ result }, cache.counts[result]);
      },
    });
    new Gauge({
      name: 'svc_gateway_key_cache_entries',
      help: 'API key records this process holds in its cache (at most SVC_KEY_CACHE_SIZE).',
      registers: [this.registry],
      collect() {
        this.set(cache.size);
      },
    });
  }

  /**
   * Settlements waiting for Redis (gateway/state/settle-retries.ts), read at each scrape: a call answered while Redis
   * was unreachable or had lost its data is charged once its retried settle lands; 0 means nothing is owed.
   */
  watchSettles(store: { pendingSettles(): number }): void {
    new Gauge({
      name: 'svc_gateway_settles_pending',
      help: 'Settlements of answered calls waiting to be retried because Redis did not take them (unreachable, or its money not rebuilt yet); each is retried every second for up to the hold lifetime.',
      registers: [this.registry],
      collect() {
        this.set(store.pendingSettles());
      },
    });
  }

  /** Leased admission's gauges and counters (SVC_ADMISSION_LEASES=1), read at each scrape. */
  watchLeases(leases: LeaseSource): void {
    watchLeases(this.registry, leases);
  }

  /** An error answer (errors.ts), by its catalog code: a bounded set. */
  error(code: string): void {
    this.errors.inc({ code });
  }

  keySeen(key: KeyRecord): void {
    this.alerts.keySeen(key);
  }

  addedLatency(seconds: number): void {
    this.added.observe(seconds);
  }

  /** Where the balance gauge reads from: one value per account of the current config. */
  watchBalances(read: () => Promise<AccountBalance[]>): void {
    this.readBalances = read;
  }

  private async collectBalances(): Promise<void> {
    if (!this.readBalances) return;
    let rows: AccountBalance[] = [];
    try {
      rows = await this.readBalances();
    } catch {
      // No config yet, or the store is away: no value is better than a stale one.
    }
    this.balance.reset();
    for (const r of rows) this.balance.set({ account: r.account }, r.balanceNano / NANO_PER_USD);
  }

  usageClamped(reason: ClampReason): void {
    this.clamped.inc({ reason });
  }

  observe(e: UsageEvent, provider?: CompiledTarget['provider'] | null, traceId?: string | null): void {
    // An MCP tool call is labelled by its McpServer (configured), never by a tool name a client chose.
    const requested = e.endpoint === 'mcp' ? `mcp:${e.upstream ?? ''}` : e.requestedModel;
    const model = e.endpoint === 'mcp' ? requested : (e.servedModel ?? e.requestedModel);
    this.requests.inc({ endpoint: e.endpoint, model: requested, status: String(e.status) });
    if (e.inputTokens) this.tokens.inc({ model, direction: 'input' }, e.inputTokens);
    if (e.outputTokens) this.tokens.inc({ model, direction: 'output' }, e.outputTokens);
    if (e.costNano) {
      this.spend.inc({ model }, e.costNano / NANO_PER_USD);
      this.accountSpend.inc({ account: e.account }, e.costNano / NANO_PER_USD);
    }
    if (e.fallback && e.fallbackReason) this.fallbacks.inc({ reason: e.fallbackReason });
    if (e.errorCode === 'rate_limited') this.rateLimited.inc({ endpoint: e.endpoint });
    if (e.errorCode === 'budget_exceeded' || e.errorCode === 'insufficient_balance') this.refused.inc({ reason: e.errorCode });
    if (e.usageEstimated) this.estimated.inc({ endpoint: e.endpoint });
    const ex = this.exemplars ? exemplarOf(traceId) : null;
    observe(this.latency, { endpoint: e.endpoint, model }, e.latencyMs / 1000, ex);
    if (e.ttftMs !== null) observe(this.ttft, { endpoint: e.endpoint, model }, e.ttftMs / 1000, ex);
    this.genai.observe(e, provider ?? null, ex);
    this.caching.observe(e);
    if (e.endpoint === 'mcp') this.mcp.observe(e, ex);
  }

  cache(model: string, what: CacheCount, n?: number): void {
    this.caching.count(model, what, n);
  }

  guardrail(f: GuardrailFact): void {
    this.guardMatches.inc({ guardrail: f.guardrail, check: f.check, action: f.action, stage: f.stage, kind: f.kind }, f.count);
  }
}
