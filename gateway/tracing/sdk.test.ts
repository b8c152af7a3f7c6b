import { describe, expect, it } from 'vitest';
import { exportTimeoutMs, genAiLatest, otlpProtocol, tracingWanted } from './env.ts';
import { samplerFromEnv } from './sdk.ts';
import { startTracing } from './start.ts';

describe('tracing from the standard environment variables', () => {
  it('is off until an OTLP endpoint is set, and off with OTEL_SDK_DISABLED=true', async () => {
    expect(tracingWanted({})).toBe(false);
    expect(await startTracing({}, 'svc-gateway')).toBeNull();
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
  });

  it('samples parent-based by default; the sampler names of the specification; refuses others', () => {
    expect(samplerFromEnv({}).toString()).toMatch(/ParentBased\{root=AlwaysOnSampler/);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString()).toMatch(
      /ParentBased\{root=TraceIdRatioBased\{0\.25\}/,
    );
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_off' }).toString()).toBe('AlwaysOffSampler');
    expect(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/ratio from 0 to 1/);
    expect(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/not supported/);
  });

  it('takes the three OTLP protocols, the traces-specific variable first, and refuses any other at start', async () => {
    expect(otlpProtocol({})).toBe('http/protobuf');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe('grpc');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })).toBe('http/json');
    expect(() => otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/thrift' })).toThrow(/http\/protobuf, http\/json, grpc/);
    await expect(startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'udp' }, 'svc-gateway')).rejects.toThrow(
      /not supported/,
    );
  });

  it('reads the export timeout (traces-specific first, 10 s by default) and refuses a bad one', () => {
    expect(exportTimeoutMs({})).toBe(10_000);
    expect(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: '2500' })).toBe(2500);
    expect(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: '2500', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '700' })).toBe(700);
    expect(() => exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: '1.5s' })).toThrow(/milliseconds/);
  });

  it('opts into the latest experimental GenAI conventions only with gen_ai_latest_experimental in the list', () => {
    expect(genAiLatest({})).toBe(false);
    expect(genAiLatest({ OTEL_SEMCONV_STABILITY_OPT_IN: 'http' })).toBe(false);
    expect(genAiLatest({ OTEL_SEMCONV_STABILITY_OPT_IN: 'http/dup, gen_ai_latest_experimental' })).toBe(true);
    expect(genAiLatest({ OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental_v2' })).toBe(false);
  });
});
