// The chart against a real kube-apiserver + etcd (test/k8s): every rendered object is accepted by a server-side dry
// run (default values and every option on); helm install, upgrade and uninstall keep the generated pepper; and the
// operator, run with the environment the chart's Deployment gives it and under exactly the RBAC the chart grants
// (a token of the chart's ServiceAccount), serves the example of docs/kubernetes.md to a cluster-mode gateway configured the same way.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { chat } from '../helpers/fleet.ts';
import { ROOT, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { docExample } from '../helpers/docs.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { startControlPlane, type ControlPlane } from '../k8s/control-plane.ts';
import { createNamespace, kubectl, kubectlOk } from '../k8s/kubectl.ts';
import { startOperatorProcess, type OperatorProcess } from '../operator/operator-process.ts';
import { container, find, parseDocs, type Container, type K8sObject } from './chart.ts';
import { CHART, FULL_VALUES, helmOk, template } from './helm.ts';

let cp: ControlPlane;
const SERVICE_MONITOR_CRD = join(import.meta.dirname, 'fixtures', 'servicemonitor-crd.yaml');
const PROMETHEUS_RULE_CRD = join(import.meta.dirname, 'fixtures', 'prometheusrule-crd.yaml');

beforeAll(async () => {
  cp = await startControlPlane();
  const crds = join(CHART, 'crds');
  const files = ['-f', crds, '-f', SERVICE_MONITOR_CRD, '-f', PROMETHEUS_RULE_CRD];
  await kubectlOk(cp, ['apply', '--server-side', ...files]);
  await kubectlOk(cp, ['wait', '--for=condition=Established', '--timeout=60s', ...files]);
}, 180_000);

afterAll(async () => {
  await cp?.stop();
});

describe('server-side dry run of every rendered object', () => {
  it.each([
    ['the default values', []],
    ['every option on', [FULL_VALUES]],
  ] as const)(
    'accepts %s',
    async (what, files) => {
      const ns = await createNamespace(cp, 'dry');
      const rendered = await template(ns, [...files]);
      const docs = parseDocs(rendered);
      const r = await kubectl(cp, ['apply', '--dry-run=server', '--validate=strict', '-n', ns, '-f', '-'], rendered);
      expect(r.code, r.stderr).toBe(0);
      const accepted = new Set(
        r.stdout.split('\n').flatMap((l) => {
          const m = /^(\w+)(?:\.[\w.]+)?\/(\S+) \w+ \(server dry run\)$/.exec(l);
          return m ? [`${m[1]}/${m[2]}`] : [];
        }),
      );
      expect(
        docs.map((d) => `${d.kind.toLowerCase()}/${d.metadata.name}`).filter((k) => !accepted.has(k)),
        r.stdout,
      ).toEqual([]);
      if (docs.some((d) => d.kind === 'ServiceMonitor')) {
        console.log(
          'ServiceMonitor: validated against test/chart/fixtures/servicemonitor-crd.yaml (the fields the chart writes, typed as in the Prometheus Operator CRD)',
        );
      }
      if (docs.some((d) => d.kind === 'PrometheusRule')) {
        console.log('PrometheusRule: validated against test/chart/fixtures/prometheusrule-crd.yaml (typed as in the Prometheus Operator v0.82.2 CRD)');
      }
      console.log(`dry run (${what}): ${docs.length} objects accepted: ${[...new Set(docs.map((d) => d.kind))].join(', ')}`);
    },
    60_000,
  );

  it('stores the PrometheusRule (metrics.prometheusRule.enabled) as rendered; the CRD refuses a bad duration or an unknown field', async () => {
    const ns = await createNamespace(cp, 'rules');
    const rule = find(parseDocs(await template(ns, [], ['metrics.prometheusRule.enabled=true'])), 'PrometheusRule', 'svc-gateway');
    const text = stringify(rule);
    await kubectlOk(cp, ['apply', '--validate=strict', '-n', ns, '-f', '-'], text);
    const stored = JSON.parse(await kubectlOk(cp, ['get', 'prometheusrules.monitoring.coreos.com', '-n', ns, rule.metadata.name, '-o', 'json'])) as K8sObject;
    // Every expression, duration and templated annotation ({{ $labels.account }}) comes back exactly as Prometheus will read it.
    expect(stored.spec).toEqual(rule.spec);
    const groups = (stored.spec as { groups: Array<{ rules: Array<{ alert: string }> }> }).groups;
    expect(groups.flatMap((g) => g.rules.map((r) => r.alert))).toContain('SvcGatewayKeyBudgetNearlyUsed');
    // The fixture validates: a duration Prometheus would not parse, and a field the CRD does not have, are refused.
    const bad = (mutate: (r: { for?: string; severity?: string }) => void): string => {
      const copy = structuredClone(rule) as K8sObject & { spec: { groups: Array<{ rules: Array<{ for?: string; severity?: string }>; name: string }> } };
      copy.metadata.name = 'bad';
      mutate(copy.spec.groups[0]?.rules[0] as { for?: string });
      return stringify(copy);
    };
    const badFor = await kubectl(
      cp,
      ['apply', '--validate=strict', '-n', ns, '-f', '-'],
      bad((r) => (r.for = '5 minutes')),
    );
    expect(badFor.code).not.toBe(0);
    expect(badFor.stderr).toContain('spec.groups[0].rules[0].for');
    const unknown = await kubectl(
      cp,
      ['apply', '--validate=strict', '-n', ns, '-f', '-'],
      bad((r) => (r.severity = 'critical')),
    );
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('unknown field "spec.groups[0].rules[0].severity"');
  });

  it('accepts the sample manifests test/e2e/kind.sh applies', async () => {
    const ns = await createNamespace(cp, 'sample');
    const r = await kubectl(cp, ['apply', '--dry-run=server', '-n', ns, '-f', join(ROOT, 'test', 'e2e', 'sample.yaml')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(4);
  });
});

interface SecretObject {
  data: Record<string, string>;
  metadata: { annotations?: Record<string, string> };
}

async function secret(ns: string, name: string): Promise<SecretObject> {
  return JSON.parse(await kubectlOk(cp, ['get', 'secret', '-n', ns, name, '-o', 'json'])) as SecretObject;
}

describe('helm install, upgrade and uninstall', () => {
  it('generates the pepper once, keeps it across upgrades, and leaves it behind on uninstall', async () => {
    const ns = await createNamespace(cp, 'helm');
    const kube = { kubeconfig: cp.kubeconfig };
    await helmOk(['install', 'svc', CHART, '-n', ns], kube);
    const first = (await secret(ns, 'svc-svc-gateway-pepper')).data.pepper;
    expect(Buffer.from(first ?? '', 'base64').toString()).toMatch(/^[A-Za-z0-9]{64}$/);
    await helmOk(['upgrade', 'svc', CHART, '-n', ns, '--set', 'gateway.drainSeconds=90'], kube);
    await helmOk(['upgrade', 'svc', CHART, '-n', ns, '-f', FULL_VALUES], kube);
    expect((await secret(ns, 'svc-svc-gateway-pepper')).data.pepper).toBe(first);
    // --no-hooks: this control plane runs no pods, so the uninstall hook's Job would never finish (test/e2e runs it).
    const uninstall = await helmOk(['uninstall', 'svc', '-n', ns, '--no-hooks'], kube);
    expect(uninstall).toContain('svc-svc-gateway-pepper');
    expect((await secret(ns, 'svc-svc-gateway-pepper')).data.pepper).toBe(first);
    await helmOk(['install', 'svc', CHART, '-n', ns], kube);
    expect((await secret(ns, 'svc-svc-gateway-pepper')).data.pepper).toBe(first);
    console.log('pepper: same value after 2 upgrades, an uninstall and a new install');
  }, 120_000);
});

describe("the operator under the chart's RBAC", () => {
  let redis: TestRedis;
  let upstream: FakeUpstream;
  let operator: OperatorProcess | undefined;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    [redis, upstream] = await Promise.all([startRedis('chart-rbac'), startFakeUpstream('chart-openai')]);
  });

  afterAll(async () => {
    await Promise.allSettled([operator?.kill('SIGKILL'), gateway?.stop()]);
    await Promise.allSettled([redis?.stop(), upstream?.close()]);
  });

  /** The Pod's environment as the kubelet would give it: Secrets read from the cluster, the downward API filled in. */
  async function podEnv(c: Container, ns: string, pod: string): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    for (const e of c.env as Array<Container['env'][number] & { valueFrom?: { fieldRef?: { fieldPath: string } } }>) {
      const ref = e.valueFrom?.secretKeyRef;
      const field = e.valueFrom?.fieldRef?.fieldPath;
      if (e.value !== undefined) env[e.name] = e.value;
      else if (ref) env[e.name] = Buffer.from((await secret(ns, ref.name)).data[ref.key] ?? '', 'base64').toString();
      else if (field === 'metadata.namespace') env[e.name] = ns;
      else if (field === 'metadata.name') env[e.name] = pod;
      else throw new Error(`the test cannot resolve env ${e.name}: ${JSON.stringify(e.valueFrom)}`);
    }
    return env;
  }

  /** A kubeconfig holding a token of the chart's operator ServiceAccount: what the Pod's mounted token gives it. */
  async function serviceAccountKubeconfig(ns: string, sa: string): Promise<string> {
    const token = (await kubectlOk(cp, ['create', 'token', '-n', ns, sa, '--duration=2h'])).trim();
    const admin = parse(await kubectlOk(cp, ['config', 'view', '--raw'])) as { clusters: Array<{ cluster: object }> };
    const path = join(dirname(cp.kubeconfig), `${ns}-${sa}.kubeconfig`);
    writeFileSync(
      path,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'test', cluster: admin.clusters[0]?.cluster }],
        users: [{ name: sa, user: { token } }],
        contexts: [{ name: 'test', context: { cluster: 'test', user: sa, namespace: ns } }],
        'current-context': 'test',
      }),
      { mode: 0o600 },
    );
    return path;
  }

  it('reconciles the example of docs/kubernetes.md into Redis, and a gateway configured by the chart serves it', async () => {
    const ns = await createNamespace(cp, 'rbac');
    const set = [`redis.url=${redis.url}`, `redis.prefix=${redis.prefix}`];
    await helmOk(['install', 'svc', CHART, '-n', ns, ...set.flatMap((s) => ['--set', s])], { kubeconfig: cp.kubeconfig });
    const docs: K8sObject[] = parseDocs(await template(ns, [], set));
    const opDeploy = find(docs, 'Deployment', '-operator');
    const sa = (opDeploy.spec as { template: { spec: { serviceAccountName: string } } }).template.spec.serviceAccountName;
    const kubeconfig = await serviceAccountKubeconfig(ns, sa);
    const auth = await kubectlOk(cp, ['auth', 'can-i', '--list', '-n', ns, `--as=system:serviceaccount:${ns}:${sa}`]);
    const rows = auth.split('\n').filter((l) => /^[a-z]/.test(l) && !l.includes('selfsubject'));
    console.log(`rights of ${sa} in ${ns}, as the chart grants them:\n${rows.join('\n')}`);
    // PORT and HOST: the Pod's own network stands in for a loopback port; KUBECONFIG for the mounted token.
    const { PORT: _port, HOST: _host, ...opEnv } = await podEnv(container(opDeploy), ns, 'svc-operator-0');
    operator = await startOperatorProcess('svc-operator-0', { ...opEnv, KUBECONFIG: kubeconfig });
    // SVC_METRICS_PORT too: the chart's 9090 stands for the Pod's own port; here any free one (parallel tests).
    const {
      PORT: _gwPort,
      HOST: _gwHost,
      SVC_METRICS_PORT: gwMetricsPort,
      ...gwEnv
    } = await podEnv(container(find(docs, 'Deployment', '-gateway')), ns, 'svc-gateway-0');
    expect(gwMetricsPort).toBe('9090');
    gateway = await startGatewayProcess({ ...gwEnv, SVC_CONFIG_POLL_MS: '500' }, ['--cluster']);

    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], docExample('docs/kubernetes.md', 'operator').replace('https://api.openai.com/v1', upstream.baseUrl));
    let key = '';
    const end = Date.now() + 30_000;
    while (Date.now() < end && !key) {
      const r = await kubectl(cp, ['get', 'secret', '-n', ns, 'ci-bot-key', '-o', 'jsonpath={.data.key}']);
      key = r.code === 0 ? Buffer.from(r.stdout, 'base64').toString() : '';
      if (!key) await new Promise((res) => setTimeout(res, 200));
    }
    expect(key, operator.output()).toMatch(/^sk-svc-/);
    let status = 0;
    while (Date.now() < end && status !== 200) {
      status = (await chat(gateway.url, key, { model: 'gpt-4o-mini' })).status;
      if (status !== 200) await new Promise((res) => setTimeout(res, 200));
    }
    expect(status, `${operator.output()}\n${gateway.output()}`).toBe(200);
    // What the ServiceMonitor scrapes: the gateway's metrics port, with the call just made; the API port has no /metrics.
    expect(await (await fetch(`${gateway.metricsUrl}/metrics`)).text()).toContain('svc_gateway_requests_total{');
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(404);
    // Every object's Ready condition: written by its own reconcile, which may come a moment after the gateway already
    // serves the key (the record and the config reach Redis first).
    const ready = ['Account/acme=True', 'ApiKey/ci-bot=True', 'ModelRoute/gpt-4o-mini=True', 'Plan/builder=True'];
    const states = async (): Promise<string[]> =>
      (
        await kubectlOk(cp, [
          'get',
          'apikeys,accounts,plans,modelroutes',
          '-n',
          ns,
          '-o',
          'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
        ])
      )
        .trim()
        .split('\n')
        .sort();
    let seen = await states();
    for (const stop = Date.now() + 30_000; Date.now() < stop && JSON.stringify(seen) !== JSON.stringify(ready); seen = await states()) {
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(seen, operator.output()).toEqual(ready);
    const lease = await kubectlOk(cp, ['get', 'lease', '-n', ns, 'svc-gateway-operator', '-o', 'jsonpath={.spec.holderIdentity}']);
    expect(lease).toBe('svc-operator-0');
    expect(operator.output()).not.toMatch(/forbidden|\b403\b/i);
    console.log("operator under the chart's Role: leader by Lease, 4 objects Ready, generated key served by the gateway, no 403");
  }, 120_000);
});
