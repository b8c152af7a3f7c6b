// Tracing's entry point for the processes: nothing of OpenTelemetry is loaded unless the environment turns tracing
// on (env.ts), so a gateway without it pays nothing at start or per call.
import type { TracingSdk } from './tracing-sdk.ts';
import { otlpProtocol, tracingWanted } from './env.ts';

export type { TracingSdk } from './tracing-sdk.ts';

type Env = Record<string, string | undefined>;

/** The SDK for one process, or null when tracing is off. `service`: the default service.name of the component. */
export async function startTracing(env: Env, service: string): Promise<TracingSdk | null> {
  if (!tracingWanted(env)) return null;
  otlpProtocol(env); // a protocol we do not speak fails the start before anything is loaded
  const { createTracing } = await import('./sdk.ts');
  return createTracing(env, service);
}
