// One call as OpenTelemetry spans, named and attributed after the GenAI semantic conventions (semantic-conventions
// v1.37, gen-ai-spans.md): a SERVER span "{gen_ai.operation.name} {gen_ai.request.model}" in the caller's trace (W3C
// traceparent), and a CLIENT child span per upstream attempt, so fallbacks are siblings. Attributes are the
// convention's, plus ours under svc.*: account, key name (never the key), task type, fallback reason, cost. No prompt
// or completion is ever recorded. Built only when tracing is on (sdk.ts): off, the call path never reaches here.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, trace, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { CompiledModel, CompiledTarget } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import type { AttemptTrace, CallTrace, CallTracer } from '../pipeline/context.ts';
import type { UsageEvent } from '../usage/event.ts';

const propagator = new W3CTraceContextPropagator();

/** gen_ai.provider.name of each provider kind (the well-known values where one exists). */
const PROVIDER_NAMES: Record<CompiledTarget['provider'], string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  mock: 'svc.mock',
  bedrock: 'aws.bedrock',
  'azure-openai': 'azure.ai.openai',
  vertex: 'gcp.vertex_ai',
  gemini: 'gcp.gemini',
};
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

export function callTracer(tracer: Tracer): CallTracer {
  return {
    start(headers, operation, model) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const span = tracer.startSpan(
        `${operation} ${model}`,
        { kind: SpanKind.SERVER, attributes: { 'gen_ai.operation.name': operation, 'gen_ai.request.model': model } },
        parent,
      );
      return new Trace(tracer, span, operation);
    },
  };
}

class Trace implements CallTrace {
  private event: UsageEvent | null = null;
  private readonly tracer: Tracer;
  private readonly span: Span;
  private readonly operation: string;

  constructor(tracer: Tracer, span: Span, operation: string) {
    this.tracer = tracer;
    this.span = span;
    this.operation = operation;
  }

  attempt(model: CompiledModel, target: CompiledTarget): AttemptTrace {
    const child = this.tracer.startSpan(
      `${this.operation} ${target.upstreamModel}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': this.operation,
          'gen_ai.provider.name': PROVIDER_NAMES[target.provider],
          'gen_ai.request.model': target.upstreamModel,
          'server.address': serverAddress(target),
          'svc.model': model.id,
          'svc.target': target.name,
        },
      },
      trace.setSpan(ROOT_CONTEXT, this.span),
    );
    return {
      end(error) {
        if (error) {
          child.setAttribute('error.type', error);
          child.setStatus({ code: SpanStatusCode.ERROR });
        }
        child.end();
      },
    };
  }

  outcome(e: UsageEvent): void {
    this.event = e;
  }

  end(err?: unknown): void {
    const s = this.span;
    const e = this.event;
    let status = e?.status ?? 0;
    let errorType = e?.errorCode ?? null;
    if (e) {
      if (e.servedModel) s.setAttribute('gen_ai.response.model', e.servedModel);
      s.setAttributes({
        'gen_ai.usage.input_tokens': e.inputTokens,
        'gen_ai.usage.output_tokens': e.outputTokens,
        'svc.account': e.account,
        'svc.api_key.name': e.apiKey,
        'svc.cost_nano_usd': e.costNano,
      });
      if (e.taskType) s.setAttribute('svc.task_type', e.taskType);
      if (e.fallbackReason) s.setAttribute('svc.fallback.reason', e.fallbackReason);
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
