import { describe, expect, it } from 'vitest';
import { samplerFromEnv, startTracing, tracingWanted } from './sdk.ts';

describe('tracing from the standard environment variables', () => {
  it('is off until an OTLP endpoint is set, and off with OTEL_SDK_DISABLED=true', () => {
    expect(tracingWanted({})).toBe(false);
    expect(startTracing({}, 'svc-gateway')).toBeNull();
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

  it('says which OTLP protocols it does not speak yet instead of sending nothing', () => {
    expect(() => startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'svc-gateway')).toThrow(/http\/protobuf/);
  });
});
