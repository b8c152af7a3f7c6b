// The OTLP span exporter of each protocol, from OpenTelemetry's own packages, each loaded only when it is the one
// configured (the gRPC one brings @grpc/grpc-js). Each reads the standard variables itself, as the specification
// says them: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT used as it is, else OTEL_EXPORTER_OTLP_ENDPOINT (with /v1/traces
// appended for the HTTP protocols; host:port or a URL for gRPC), OTEL_EXPORTER_OTLP_(TRACES_)HEADERS,
// _COMPRESSION and, for gRPC, _INSECURE and the certificate files. The timeout is passed (env.ts reads it).
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { OtlpProtocol } from './env.ts';

export async function traceExporter(protocol: OtlpProtocol, timeoutMillis: number): Promise<SpanExporter> {
  switch (protocol) {
    case 'http/protobuf': {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
      return new OTLPTraceExporter({ timeoutMillis });
    }
    case 'http/json': {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
      return new OTLPTraceExporter({ timeoutMillis });
    }
    case 'grpc': {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-grpc');
      return new OTLPTraceExporter({ timeoutMillis });
    }
    default: {
      const never: never = protocol;
      return never;
    }
  }
}
