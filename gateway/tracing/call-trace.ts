// One call as OpenTelemetry spans, named and attributed after the GenAI semantic conventions (v1.37.0 by default;
// the latest experimental form with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental, see env.ts): a SERVER
// span "{gen_ai.operation.name} {gen_ai.request.model}" in the caller's trace (W3C traceparent), and a CLIENT child
// span per upstream attempt, so fallbacks are siblings. An attempt's span ends when its answer does (a stream's
// last event), with the answer's id, finish reasons and usage. Attributes are the convention's, plus ours under
// svc.*: account, key name (never the key), task type, fallback reason, cost, an audio call's billed unit. Prompts and completions only for a
// ModelRoute that opts in (content.ts: redacted, bounded). Built only when tracing is on (start.ts).
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, defaultTextMapGetter, trace, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { genAiProviderName } from '../contract/genai.ts';
import type { CompiledModel, CompiledTarget } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import type { AttemptAnswer, AttemptTrace, CallTrace, CallTracer, TracedCall } from '../pipeline/context.ts';
import type { Usage } from '../translate/types.ts';
import type { UsageEvent } from '../usage/event.ts';
import type { CheckSpan } from '../guardrails/check-times.ts';
import { inputContent, outputContent, type CapturedInput } from './content.ts';
import { guardSpan } from './guard-spans.ts';

const propagator = new W3CTraceContextPropagator();

const DEFAULT_HOSTS: Record<CompiledTarget['provider'], string> = {
  openai: 'api.openai.com',
  anthropic: 'api.anthropic.com',
  mock: 'localhost',
  bedrock: 'bedrock-runtime.amazonaws.com',
  'azure-openai': 'openai.azure.com',
  vertex: 'aiplatform.googleapis.com',
  gemini: 'generativelanguage.googleapis.com',
};

const hosts = new WeakMap<CompiledTarget, string>();
function serverAddress(t: CompiledTarget): string {
  let h = hosts.get(t);
  if (h === undefined) {
    try {
      h = t.baseUrl ? new URL(t.baseUrl).hostname : DEFAULT_HOSTS[t.provider];
    } catch {
      h = '';
    }
    hosts.set(t, h);
  }
  return h;
}

export interface TraceOptions {
  /** OTEL_SEMCONV_STABILITY_OPT_IN has gen_ai_latest_experimental: the usage attributes added after v1.37 too. */
  latest: boolean;
}

export function callTracer(tracer: Tracer, opts: TraceOptions): CallTracer {
  return {
    start(headers, call) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const span = tracer.startSpan(
        `${call.operation} ${call.model}`,
        { kind: SpanKind.SERVER, attributes: { 'gen_ai.operation.name': call.operation, 'gen_ai.request.model': call.model } },
        parent,
      );
      return new Trace(tracer, span, call, opts);
    },
  };
}

function usageAttributes(s: Span, u: Usage, latest: boolean): void {
  s.setAttribute('gen_ai.usage.input_tokens', u.inputTokens);
  s.setAttribute('gen_ai.usage.output_tokens', u.outputTokens);
  if (!latest) return;
  // Added to the registry after v1.37 (input_tokens includes both cache counts, as ours does).
  s.setAttribute('gen_ai.usage.cache_read.input_tokens', u.cacheReadTokens);
  s.setAttribute('gen_ai.usage.cache_creation.input_tokens', u.cacheWriteTokens);
  if (u.reasoningTokens !== undefined) s.setAttribute('gen_ai.usage.reasoning.output_tokens', u.reasoningTokens);
}

class Trace implements CallTrace {
  private event: UsageEvent | null = null;
  private input: CapturedInput | null | undefined;
  private readonly tracer: Tracer;
  private readonly span: Span;
  private readonly call: TracedCall;
  private readonly opts: TraceOptions;

  constructor(tracer: Tracer, span: Span, call: TracedCall, opts: TraceOptions) {
    this.tracer = tracer;
    this.span = span;
    this.call = call;
    this.opts = opts;
  }

  traceId(): string | null {
    const c = this.span.spanContext();
    return c.traceFlags & TraceFlags.SAMPLED ? c.traceId : null;
  }

  attempt(model: CompiledModel, target: CompiledTarget): AttemptTrace {
    const call = this.call;
    const child = this.tracer.startSpan(
      `${call.operation} ${target.upstreamModel}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': call.operation,
          'gen_ai.provider.name': genAiProviderName(target.provider),
          'gen_ai.request.model': target.upstreamModel,
          'server.address': serverAddress(target),
          'svc.model': model.id,
          'svc.target': target.name,
        },
      },
      trace.setSpan(ROOT_CONTEXT, this.span),
    );
    const capture = model.captureContent === true && call.operation === 'chat';
    if (capture) {
      // Read once per call, whatever the number of attempts.
      if (this.input === undefined) this.input = inputContent(call.dialect, call.endpoint, call.body);
      if (this.input) {
        child.setAttribute('gen_ai.input.messages', this.input.messages);
        if (this.input.system) child.setAttribute('gen_ai.system_instructions', this.input.system);
        if (this.input.truncated) child.setAttribute('svc.content.truncated', true);
      }
    }
    const latest = this.opts.latest;
    return {
      capture,
      end(error: string | null, answer?: AttemptAnswer) {
        if (error) {
          child.setAttribute('error.type', error);
          child.setStatus({ code: SpanStatusCode.ERROR });
        }
        if (answer) {
          usageAttributes(child, answer.usage, latest);
          const f = answer.facts;
          if (f?.id) child.setAttribute('gen_ai.response.id', f.id);
          if (f && f.finishReasons.length > 0) child.setAttribute('gen_ai.response.finish_reasons', f.finishReasons);
          if (capture && answer.output !== undefined) {
            const out = outputContent(call.endpoint, answer.output, answer.stream === true);
            if (out) child.setAttribute('gen_ai.output.messages', out.messages);
            if (out?.truncated) child.setAttribute('svc.content.truncated', true);
          }
        }
        child.end();
      },
    };
  }

  outcome(e: UsageEvent): void {
    this.event = e;
  }

  guardCheck(c: CheckSpan): void {
    guardSpan(this.tracer, this.span, c);
  }

  end(err?: unknown): void {
    const s = this.span;
    const e = this.event;
    let status = e?.status ?? 0;
    let errorType = e?.errorCode ?? null;
    if (e) {
      if (e.servedModel) s.setAttribute('gen_ai.response.model', e.servedModel);
      usageAttributes(
        s,
        { inputTokens: e.inputTokens, outputTokens: e.outputTokens, cacheReadTokens: e.cacheReadTokens, cacheWriteTokens: e.cacheWriteTokens },
        this.opts.latest,
      );
      s.setAttributes({ 'svc.account': e.account, 'svc.api_key.name': e.apiKey, 'svc.cost_nano_usd': e.costNano });
      if (e.taskType) s.setAttribute('svc.task_type', e.taskType);
      if (e.fallbackReason) s.setAttribute('svc.fallback.reason', e.fallbackReason);
      // Audio calls are billed in seconds or characters beside tokens.
      if (e.unit && e.units !== undefined) s.setAttributes({ 'svc.usage.unit': e.unit, 'svc.usage.units': e.units });
    }
    if (err !== undefined && !e) {
      status = err instanceof GatewayError ? err.status : 500;
      errorType = err instanceof GatewayError ? err.code : '_OTHER';
    }
    if (status) s.setAttribute('http.response.status_code', status);
    if (errorType) s.setAttribute('error.type', errorType);
    if (status >= 500) s.setStatus({ code: SpanStatusCode.ERROR });
    s.end();
  }
}
