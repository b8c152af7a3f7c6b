// The chart's otel values: no OTEL_* variable by default (tracing off); with otel.endpoint, the gateway gets the
// standard variables (test/otel/traces.test.ts shows a gateway process with them exporting to a real collector):
// its service.name, the k8s.* resource attributes from the downward API, the sampler, headers from a Secret.
import { describe, expect, it } from 'vitest';
import { container, find, parseDocs, type Container } from './chart.ts';
import { CHART, helm, template } from './helm.ts';

const gatewayEnv = async (set: string[]): Promise<Container['env']> => container(find(parseDocs(await template('ns1', [], set)), 'Deployment', '-gateway')).env;

describe('otel values', () => {
  it('set no OTEL_* variable by default', async () => {
    expect((await gatewayEnv([])).filter((e) => e.name.startsWith('OTEL_'))).toEqual([]);
  });

  it('with otel.endpoint, pass the standard variables, k8s.* resource attributes from the downward API', async () => {
    const env = await gatewayEnv([
      'otel.endpoint=http://otel-collector.monitoring:4318',
      'otel.sampler=parentbased_traceidratio',
      'otel.samplerArg=0.25',
      'otel.headersSecret.name=otel-auth',
      'otel.headersSecret.key=headers',
      'otel.resourceAttributes.team=ml',
    ]);
    const by = Object.fromEntries(env.map((e) => [e.name, e]));
    expect(by.OTEL_EXPORTER_OTLP_ENDPOINT?.value).toBe('http://otel-collector.monitoring:4318');
    expect(by.OTEL_EXPORTER_OTLP_PROTOCOL?.value).toBe('http/protobuf');
    expect(by.OTEL_SERVICE_NAME?.value).toBe('svc-gateway');
    expect([by.OTEL_TRACES_SAMPLER?.value, by.OTEL_TRACES_SAMPLER_ARG?.value]).toEqual(['parentbased_traceidratio', '0.25']);
    expect(by.OTEL_EXPORTER_OTLP_HEADERS?.valueFrom).toEqual({ secretKeyRef: { name: 'otel-auth', key: 'headers' } });
    expect(by.K8S_POD_NAME?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    // $(VAR) references resolve only to variables defined before them in the container's env.
    const order = env.map((e) => e.name);
    expect(order.indexOf('K8S_POD_NAME')).toBeLessThan(order.indexOf('OTEL_RESOURCE_ATTRIBUTES'));
    expect(by.OTEL_RESOURCE_ATTRIBUTES?.value?.split(',')).toEqual([
      'k8s.pod.name=$(K8S_POD_NAME)',
      'k8s.namespace.name=$(K8S_NAMESPACE_NAME)',
      'k8s.node.name=$(K8S_NODE_NAME)',
      'k8s.container.name=gateway',
      expect.stringMatching(/^service\.version=\d/),
      'team=ml',
    ]);
  });

  it('with otel.protocol=grpc, pass it as OTEL_EXPORTER_OTLP_PROTOCOL', async () => {
    const env = await gatewayEnv(['otel.endpoint=http://otel-collector.monitoring:4317', 'otel.protocol=grpc']);
    expect(env.find((e) => e.name === 'OTEL_EXPORTER_OTLP_PROTOCOL')?.value).toBe('grpc');
  });

  it.each([
    ['otel.endpoint=collector:4318', 'endpoint'],
    ['otel.sampler=sometimes', 'sampler'],
    ['otel.protocol=http/thrift', 'protocol'],
    ['otel.headersSecret.name=x', 'key'],
    ['otel.resourceAttributes.team=a\\,b', 'team'],
  ])('refuses %s (values.schema.json)', async (set, field) => {
    const r = await helm(['template', 'svc', CHART, '--set', set]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(field);
  });
});
