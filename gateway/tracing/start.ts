// Tracing's entry point for the processes: nothing of OpenTelemetry is loaded unless the environment turns tracing
// on (env.ts), so a gateway without it pays nothing at start or per call.
import type { CallTracer } from '../pipeline/context.ts';
import type { SpanCounts } from './bounded.ts';
import { otlpProtocol, tracingWanted } from './env.ts';

type Env = Record<string, string | undefined>;

export interface TracingSdk {
  /** Starts each call's trace (call-trace.ts). */
  calls: CallTracer;
  /** What became of the sampled spans (svc_gateway_trace_spans_total). */
  counts: SpanCounts;
  /** Exports what is queued and stops (at shutdown, after the calls in flight). */
  shutdown(): Promise<void>;
}

/** The SDK for one process, or null when tracing is off. `service`: the default service.name of the component. */
export async function startTracing(env: Env, service: string): Promise<TracingSdk | null> {
  if (!tracingWanted(env)) return null;
  otlpProtocol(env); // a protocol we do not speak fails the start before anything is loaded
  const { createTracing } = await import('./sdk.ts');
  return createTracing(env, service);
}
