// The OpenTelemetry SDK as every OpenTelemetry SDK is configured, from the standard environment variables only
// (loaded by start.ts only when tracing is on). Spans leave through a BatchSpanProcessor behind a bounded queue of
// our own (a collector that is down or slow drops spans, never slows a call) and the OTLP exporter of the protocol
// asked for (exporters.ts). OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES make the resource;
// OTEL_TRACES_SAMPLER/_ARG the sampler (parentbased_always_on by default, as the specification says).
import { BoundedProcessor, countingExporter, type SpanCounts } from './bounded.ts';
import { callTracer } from './call-trace.ts';
import { mcpTracer } from './mcp-trace.ts';
import { exportTimeoutMs, genAiLatest, otlpProtocol } from './env.ts';
import { traceExporter } from './exporters.ts';
import type { TracingSdk } from './tracing-sdk.ts';
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

export async function createTracing(env: Env, service: string): Promise<TracingSdk> {
  const timeout = exportTimeoutMs(env);
  const sampler = samplerFromEnv(env);
  const resource = resourceFromAttributes({ 'service.name': service }).merge(detectResources({ detectors: [envDetector] }));
  const counts: SpanCounts = { exported: 0, failed: 0, dropped: 0 };
  let bounded: BoundedProcessor | null = null;
  const exporter = countingExporter(await traceExporter(otlpProtocol(env), timeout), counts, (n) => bounded?.left(n));
  bounded = new BoundedProcessor(
    new BatchSpanProcessor({ exporter, maxQueueSize: QUEUE + 1, maxExportBatchSize: 512, scheduledDelayMillis: 1000, exportTimeoutMillis: timeout }),
    QUEUE,
    counts,
  );
  const provider = new TracerProvider({ resource, sampler, spanProcessors: [bounded] });
  return {
    calls: callTracer(provider.getTracer('svc-gateway'), { latest: genAiLatest(env) }),
    mcp: mcpTracer(provider.getTracer('svc-gateway')),
    counts,
    shutdown: () => provider.shutdown(),
  };
}
