// The OpenTelemetry GenAI metrics (semantic-conventions v1.37, gen-ai-metrics.md), as Prometheus names them under
// the OpenTelemetry-to-Prometheus rules (dots to underscores, the unit "s" as _seconds, "{token}" dropped), with the
// convention's bucket advice. The gateway is the server of its callers (gen_ai.server.*) and the client of its
// upstreams (gen_ai.client.*). Labels: operation, provider (gen_ai.provider.name of the target that served; empty
// when none did), requested and served model (configured ids), error type (a catalog code) and token type: all
// bounded. Ours (svc_gateway_*) add what the convention lacks (account, cost). The duration and time-to-first-token
// histograms carry the call's trace id as an exemplar while tracing (exemplars.ts).
import { Histogram, type Registry } from 'prom-client';
import { FastHistogram } from './fast-metrics.ts';
import { genAiProviderName } from '../contract/genai.ts';
import type { CompiledTarget } from '../contract/snapshot.ts';
import { observe, type Exemplar } from './exemplars.ts';
import type { Endpoint, UsageEvent } from '../usage/event.ts';

const DURATION = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKENS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const PER_TOKEN = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5];

/** gen_ai.operation.name of each endpoint; count_tokens and MCP tool calls are no GenAI model operation (no metric). */
const OPERATION: Record<Endpoint, string | null> = {
  'chat.completions': 'chat',
  messages: 'chat',
  responses: 'chat',
  embeddings: 'embeddings',
  count_tokens: null,
  mcp: null,
  completions: 'text_completion',
  rerank: 'rerank',
  moderations: 'moderation',
  'images.generations': 'image_generation',
  'images.edits': 'image_generation',
  'audio.transcriptions': 'transcription',
  'audio.translations': 'translation',
  'audio.speech': 'speech',
};

const MODEL_LABELS = ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_response_model'] as const;

export class GenAiMetrics {
  private readonly serverDuration: Histogram;
  private readonly ttft: Histogram;
  private readonly perToken: Histogram;
  private readonly tokens: Histogram;
  private readonly clientDuration: Histogram;

  constructor(registry: Registry, enableExemplars = false) {
    const registers = [registry];
    this.serverDuration = new FastHistogram({
      name: 'gen_ai_server_request_duration_seconds',
      help: 'GenAI server request duration (gen_ai.server.request.duration).',
      labelNames: [...MODEL_LABELS, 'error_type'],
      buckets: DURATION,
      registers,
      enableExemplars,
    });
    this.ttft = new FastHistogram({
      name: 'gen_ai_server_time_to_first_token_seconds',
      help: 'Time to generate the first token for successful responses (gen_ai.server.time_to_first_token).',
      labelNames: MODEL_LABELS,
      buckets: TTFT,
      registers,
      enableExemplars,
    });
    this.perToken = new FastHistogram({
      name: 'gen_ai_server_time_per_output_token_seconds',
      help: 'Time per output token after the first, for successful responses (gen_ai.server.time_per_output_token).',
      labelNames: MODEL_LABELS,
      buckets: PER_TOKEN,
      registers,
    });
    this.tokens = new FastHistogram({
      name: 'gen_ai_client_token_usage',
      help: 'Tokens used per upstream call, by token type (gen_ai.client.token.usage).',
      labelNames: [...MODEL_LABELS, 'gen_ai_token_type'],
      buckets: TOKENS,
      registers,
    });
    this.clientDuration = new FastHistogram({
      name: 'gen_ai_client_operation_duration_seconds',
      help: 'GenAI operation duration as the gateway saw it from its upstreams (gen_ai.client.operation.duration).',
      labelNames: [...MODEL_LABELS, 'error_type'],
      buckets: DURATION,
      registers,
      enableExemplars,
    });
  }

  /** `provider`: the kind of the target that served (null: none did); `ex`: the trace id exemplar, if any. */
  observe(e: UsageEvent, provider: CompiledTarget['provider'] | null = null, ex: Exemplar = null): void {
    const op = OPERATION[e.endpoint];
    if (!op) return;
    const labels = {
      gen_ai_operation_name: op,
      gen_ai_provider_name: provider ? genAiProviderName(provider) : '',
      gen_ai_request_model: e.requestedModel,
      gen_ai_response_model: e.servedModel ?? '',
    };
    const seconds = e.latencyMs / 1000;
    observe(this.serverDuration, { ...labels, error_type: e.errorCode ?? '' }, seconds, ex);
    // Calls that reached an upstream: the gateway as its client.
    if (e.upstream !== null) {
      observe(this.clientDuration, { ...labels, error_type: e.errorCode ?? '' }, seconds, ex);
      if (e.inputTokens) this.tokens.observe({ ...labels, gen_ai_token_type: 'input' }, e.inputTokens);
      if (e.outputTokens) this.tokens.observe({ ...labels, gen_ai_token_type: 'output' }, e.outputTokens);
    }
    if (e.status !== 200 || e.ttftMs === null) return;
    observe(this.ttft, labels, e.ttftMs / 1000, ex);
    if (e.outputTokens > 1) this.perToken.observe(labels, (e.latencyMs - e.ttftMs) / 1000 / (e.outputTokens - 1));
  }
}
