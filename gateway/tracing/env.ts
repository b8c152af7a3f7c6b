// The standard OpenTelemetry environment variables that decide whether and how the gateway traces, read without
// loading any OpenTelemetry package: a gateway without tracing never loads the SDK or an exporter (start.ts).
type Env = Record<string, string | undefined>;

/** The OTLP protocols the gateway exports spans with (the exporter's own package for each, loaded on demand). */
export const PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof PROTOCOLS)[number];

/** True when the environment turns tracing on. */
export function tracingWanted(env: Env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf; anything else throws. */
export function otlpProtocol(env: Env): OtlpProtocol {
  const raw = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  const p = PROTOCOLS.find((x) => x === raw);
  if (!p) throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL ${JSON.stringify(raw)} is not supported: use ${PROTOCOLS.join(', ')}`);
  return p;
}

/** OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT, in ms (the specification's default: 10 s). */
export function exportTimeoutMs(env: Env): number {
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT?.trim();
  const generic = env.OTEL_EXPORTER_OTLP_TIMEOUT?.trim();
  const [name, raw] = specific ? ['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', specific] : ['OTEL_EXPORTER_OTLP_TIMEOUT', generic];
  if (!raw) return 10_000;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms <= 0) throw new Error(`${name} must be a whole number of milliseconds above 0, got ${JSON.stringify(raw)}`);
  return ms;
}

/**
 * The GenAI semantic conventions the spans follow. By default v1.37.0, the version the gateway first emitted;
 * OTEL_SEMCONV_STABILITY_OPT_IN (a comma-separated list) with `gen_ai_latest_experimental` asks for the latest
 * experimental form the gateway knows (semconv.ts says what differs).
 */
export function genAiLatest(env: Env): boolean {
  return (env.OTEL_SEMCONV_STABILITY_OPT_IN ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .includes('gen_ai_latest_experimental');
}
