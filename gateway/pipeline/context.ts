// What the pipeline needs from the process: config, state, providers, the key pepper, a clock, a log and a place
// for each call's outcome (metrics). Interfaces only: no transport, no framework.
import type { CompiledModel, CompiledTarget, KeyRecord, Snapshot } from '../contract/snapshot.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { Store } from '../state/store.ts';
import type { StoredResponses } from '../stored-responses/service.ts';
import type { Dialect } from '../errors/catalog.ts';
import type { AnswerFacts, Usage } from '../translate/types.ts';
import type { CheckSpan } from '../guardrails/check-times.ts';
import type { Endpoint, GuardrailFact, UsageEvent } from '../usage/event.ts';
import type { ClampReason } from './bound-usage.ts';
import type { CallLog } from './call-log.ts';
import type { Spool } from '../uploads/spool.ts';

/** The part of a pino logger the pipeline writes to (fastify's logger is one): call-log.ts. */
export type { CallLog } from './call-log.ts';

/** Counts each call's outcome (gateway/http/metrics.ts is the Prometheus one). */
export interface CallMetrics {
  /** `provider`: the served target's provider kind; `traceId`: the call's sampled trace (an exemplar). */
  observe(e: UsageEvent, provider?: CompiledTarget['provider'] | null, traceId?: string | null): void;
  /** An upstream's usage report above the call's bound, cut to it (bound-usage.ts). */
  usageClamped?(reason: ClampReason): void;
  /** The time a call spent in the gateway before its first upstream request (key, limits, hold, routing), in s. */
  addedLatency?(seconds: number): void;
  /** A key that is calling (before admission): the Prometheus metrics track the budgets of keys that have one. */
  keySeen?(key: KeyRecord): void;
  /** The response cache's writes and failures by route model (hits, misses and bypasses are in the usage events). */
  cache?(model: string, what: CacheCount, n?: number): void;
  /** A guardrail's match (gateway/guardrails/): counted by guardrail, check, action, stage and kind. */
  guardrail?(f: GuardrailFact): void;
}

/** stored: an entry written (n: its bytes); oversize: an answer above maxEntryBytes or the account budget, not stored;
 * evicted: entries removed to make room (n); error: a cache read or write failed and the call went on uncached. */
export type CacheCount = 'stored' | 'oversize' | 'evicted' | 'error';

export interface ConfigSource {
  current(): Snapshot;
}

/** Graceful shutdown's view of the calls (lifecycle/drain.ts): it counts them and ends them once its budget is spent. */
export interface CallLifecycle {
  track<T>(call: () => Promise<T>): Promise<T>;
  /** Aborted when calls in flight must end now; its reason is the GatewayError they end with. */
  readonly ending: AbortSignal;
}

/** What the pipeline knows of target availability (gateway/availability/health.ts): no I/O on the call path. */
export interface Availability {
  /** The target is in major_outage: tried after every other target and fallback. */
  isDown(model: string, target: string): boolean;
  /** An upstream attempt's outcome; `failed` for upstream failures (5xx, timeout, connect error). */
  record(model: string, target: string, failed: boolean): void;
}

/** Traces of calls (gateway/tracing/call-trace.ts): present only when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT). */
export interface CallTracer {
  start(headers: Record<string, string | string[] | undefined>, call: TracedCall): CallTrace;
}

/** What the trace knows of a call when it starts. */
export interface TracedCall {
  /** gen_ai.operation.name: chat, embeddings, text_completion, rerank, moderation, image, transcription, translation, speech. */
  operation: 'chat' | 'embeddings' | 'text_completion' | 'rerank' | 'moderation' | 'image' | 'transcription' | 'translation' | 'speech';
  model: string;
  dialect: Dialect;
  endpoint: Endpoint;
  /** The client's parsed body: read only for an attempt whose ModelRoute captures content (spec.tracing). */
  body?: unknown;
}

/** One call's trace: a span per upstream attempt, the usage event's outcome, ended once the call is over. */
export interface CallTrace {
  attempt(model: CompiledModel, target: CompiledTarget): AttemptTrace;
  outcome(e: UsageEvent): void;
  /** A guardrail check of the call, once its stage is over (gateway/guardrails/check-times.ts): a child span. */
  guardCheck?(c: CheckSpan): void;
  /** The trace's id when it is sampled (an exemplar of the call's latency), else null. */
  traceId(): string | null;
  /** `err`: what the call threw before its answer started, if anything. */
  end(err?: unknown): void;
}

/** What an attempt that answered got: read when its answer (or stream) is over. */
export interface AttemptAnswer {
  usage: Usage;
  facts: AnswerFacts | null;
  /** The answer as the client got it (a JSON body, or the stream's SSE text): only when `capture` is set. */
  output?: string;
  stream?: boolean;
}

export interface AttemptTrace {
  /** The attempt's ModelRoute captures prompts and completions (spec.tracing.captureContent). */
  readonly capture: boolean;
  /** `error`: why the attempt failed (a fallback reason or an error code), null when it answered (then `answer`). */
  end(error: string | null, answer?: AttemptAnswer): void;
}

export interface GatewayDeps {
  config: ConfigSource;
  store: Store;
  providers: ProviderRegistry;
  pepper: string;
  metrics: CallMetrics;
  log: CallLog;
  now: () => number;
  lifecycle?: CallLifecycle;
  availability?: Availability;
  tracer?: CallTracer;
  /** Bytes of cached answers one account may hold (SVC_CACHE_ACCOUNT_MAX_BYTES; default 64 MiB). */
  cacheAccountBytes?: number;
  /** Stored Responses (store, previous_response_id, GET /v1/responses/{id}); absent: /v1/responses is stateless. */
  responses?: StoredResponses;
  /** This call's trace (set on the call's own copy of the deps, only while tracing). */
  trace?: CallTrace;
  /**
   * SVC_SETTLE_DURABILITY=postgres: a served call is settled (its usage event committed in Postgres by the store's
   * settle, gateway/usage/durable-settle.ts) before its answer is sent, or, for a stream, before its final event.
   */
  settleBeforeAnswer?: boolean;
  /** Where large uploads (audio, image edits) wait while their call runs (uploads/spool.ts); absent: a default spool. */
  spool?: Spool;
}
