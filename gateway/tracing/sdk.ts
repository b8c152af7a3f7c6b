// The OpenTelemetry SDK as every OpenTelemetry SDK is configured, from the standard environment variables only: off
// until OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, or when OTEL_SDK_DISABLED=true.
// Spans leave through a BatchSpanProcessor (a bounded queue: a collector that is down or slow drops spans, never
// slows a call) and the OTLP http/protobuf exporter, which reads OTEL_EXPORTER_OTLP_*ENDPOINT and _HEADERS itself.
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES make the resource; OTEL_TRACES_SAMPLER/_ARG the sampler
// (parentbased_always_on by default, as the specification says).
import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BoundedProcessor, countingExporter, type SpanCounts } from './bounded.ts';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';

type Env = Record<string, string | undefined>;

/** Sampled spans waiting for export, at most: past it they are dropped (and counted), never waited for. */
export const QUEUE = 2048;

export interface TracingSdk {
  tracer: Tracer;
  /** What became of the sampled spans (svc_gateway_trace_spans_total). */
  counts: SpanCounts;
  /** Exports what is queued and stops (at shutdown, after the calls in flight). */
  shutdown(): Promise<void>;
}

/** True when the environment turns tracing on. */
export function tracingWanted(env: Env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, as the specification names them; unknown names throw. */
export function samplerFromEnv(env: Env): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim().toLowerCase();
  const arg = env.OTEL_TRACES_SAMPLER_ARG;
  const ratio = (): number => {
    const r = arg === undefined || arg === '' ? 1 : Number(arg);
    if (!(r >= 0 && r <= 1)) throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got ${JSON.stringify(arg)}`);
    return r;
  };
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      throw new Error(`OTEL_TRACES_SAMPLER ${JSON.stringify(name)} is not supported (always_on, always_off, traceidratio and their parentbased_ forms)`);
  }
}

/** The SDK for one process, or null when tracing is off. `service`: the default service.name of the component. */
export function startTracing(env: Env, service: string): TracingSdk | null {
  if (!tracingWanted(env)) return null;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  if (protocol !== 'http/protobuf') throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL ${JSON.stringify(protocol)} is not supported yet: use http/protobuf`);
  const resource = resourceFromAttributes({ 'service.name': service }).merge(detectResources({ detectors: [envDetector] }));
  const counts: SpanCounts = { exported: 0, failed: 0, dropped: 0 };
  let bounded: BoundedProcessor | null = null;
  const exporter = countingExporter(new OTLPTraceExporter(), counts, (n) => bounded?.left(n));
  bounded = new BoundedProcessor(
    new BatchSpanProcessor({ exporter, maxQueueSize: QUEUE + 1, maxExportBatchSize: 512, scheduledDelayMillis: 1000, exportTimeoutMillis: 5000 }),
    QUEUE,
    counts,
  );
  const provider = new TracerProvider({ resource, sampler: samplerFromEnv(env), spanProcessors: [bounded] });
  return { tracer: provider.getTracer('svc-gateway'), counts, shutdown: () => provider.shutdown() };
}
