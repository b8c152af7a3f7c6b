// The chart as helm sees it: lint --strict and template for the default values and for every option on
// (ci/full-values.yaml), the schema's messages for bad values, and what the rendered objects promise: CRDs identical
// to crds/, the operator's Role identical to operator/rbac/role.yaml, commands identical to the npm scripts, the
// drain budget inside terminationGracePeriodSeconds, the pepper kept, the dashboards well formed.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../helpers/process.ts';
import { container, envOf, find, parseDocs, podSpec, type K8sObject } from './chart.ts';
import { CHART, FULL_VALUES, helm, helmOk, template } from './helm.ts';
import { printedBlock } from '../e2e/printed.ts';

let defaults: K8sObject[];
let full: K8sObject[];

beforeAll(async () => {
  [defaults, full] = await Promise.all([template('ns1').then(parseDocs), template('ns1', [FULL_VALUES]).then(parseDocs)]);
}, 120_000);

const kinds = (docs: K8sObject[]): string[] => docs.map((d) => `${d.kind}/${d.metadata.name}`).sort();

describe('helm lint and template', () => {
  it('lints clean (--strict) with the default values and with every option on', async () => {
    for (const values of [[], ['-f', FULL_VALUES]]) {
      const r = await helm(['lint', '--strict', CHART, ...values]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('0 chart(s) failed');
    }
  });

  it('renders the default installation', () => {
    expect(kinds(defaults)).toEqual([
      'ClusterRoleBinding/ns1-svc-svc-gateway-console',
      'ConfigMap/svc-svc-gateway-dashboard-spend',
      'ConfigMap/svc-svc-gateway-dashboard-traffic',
      'Deployment/svc-svc-gateway-console',
      'Deployment/svc-svc-gateway-gateway',
      'Deployment/svc-svc-gateway-operator',
      'Job/svc-svc-gateway-uninstall',
      'PodDisruptionBudget/svc-svc-gateway-gateway',
      'PodDisruptionBudget/svc-svc-gateway-operator',
      'Role/svc-svc-gateway-console',
      'Role/svc-svc-gateway-operator',
      'Role/svc-svc-gateway-uninstall',
      'RoleBinding/svc-svc-gateway-console',
      'RoleBinding/svc-svc-gateway-operator',
      'RoleBinding/svc-svc-gateway-uninstall',
      'Secret/svc-svc-gateway-connections',
      'Secret/svc-svc-gateway-pepper',
      'Service/svc-svc-gateway-console',
      'Service/svc-svc-gateway-gateway',
      'Service/svc-svc-gateway-gateway-metrics',
      'Service/svc-svc-gateway-operator-metrics',
      'ServiceAccount/svc-svc-gateway-console',
      'ServiceAccount/svc-svc-gateway-gateway',
      'ServiceAccount/svc-svc-gateway-operator',
      'ServiceAccount/svc-svc-gateway-uninstall',
    ]);
  });

  it('renders every optional object with every option on', () => {
    const got = kinds(full);
    for (const k of [
      'HorizontalPodAutoscaler/svc-svc-gateway-gateway',
      'Deployment/svc-svc-gateway-exporter',
      'Service/svc-svc-gateway-exporter-metrics',
      'ServiceMonitor/svc-svc-gateway',
      'PrometheusRule/svc-svc-gateway',
      'Ingress/svc-svc-gateway-gateway',
      'NetworkPolicy/svc-svc-gateway-gateway',
      'NetworkPolicy/svc-svc-gateway-operator',
      'NetworkPolicy/svc-svc-gateway-exporter',
    ])
      expect(got).toContain(k);
  });

  it('runs a fixed number of gateways unless autoscaling is asked for (an HPA needs metrics-server)', async () => {
    const replicas = (docs: K8sObject[]): unknown => (find(docs, 'Deployment', 'svc-svc-gateway-gateway').spec as { replicas?: number }).replicas;
    expect([replicas(defaults), kinds(defaults).filter((k) => k.startsWith('HorizontalPodAutoscaler/'))]).toEqual([2, []]);
    const scaled = parseDocs(await template('ns1', [], ['gateway.autoscaling.enabled=true']));
    expect(replicas(scaled)).toBeUndefined();
    expect(find(scaled, 'HorizontalPodAutoscaler', 'svc-svc-gateway-gateway').spec).toMatchObject({ minReplicas: 2, maxReplicas: 10 });
  });

  it('sets HOST=0.0.0.0 on every container that listens (the processes listen on 127.0.0.1 unless told otherwise)', () => {
    for (const docs of [defaults, full]) {
      const listening = docs.filter((d) => d.kind === 'Deployment').flatMap((d) => podSpec(d).containers.filter((c) => (c.ports ?? []).length > 0));
      expect(listening.length).toBeGreaterThanOrEqual(3);
      expect(listening.map((c) => `${c.name} HOST=${envOf(c, 'HOST')?.value ?? '(unset)'}`)).toEqual(listening.map((c) => `${c.name} HOST=0.0.0.0`));
    }
  });
});

describe('values schema', () => {
  const cases: Array<[string, string]> = [
    ['redis.url=', "at '/redis': 'anyOf' failed"],
    ['redis.url=http://redis:6379', "at '/redis/url': 'http://redis:6379' does not match pattern"],
    ['postgres.url=mysql://db/usage', "at '/postgres/url': 'mysql://db/usage' does not match pattern"],
    ['gateway.drainSeconds=-1', "at '/gateway/drainSeconds': minimum: got -1, want 0"],
    ['operator.replicas=0', "at '/operator/replicas': minimum: got 0, want 1"],
    ['gateway.replica=3', "at '/gateway': additional properties 'replica' not allowed"],
    ['gateway.logLevel=verbose', "at '/gateway/logLevel': value must be one of"],
    ['operator.leaseName=Not_A_Name', "at '/operator/leaseName': 'Not_A_Name' does not match pattern"],
    ['gateway.metricsPort=8080', "gateway.metricsPort must not be 8080: that is the gateway's API port"],
    ['gateway.metricsPort=0', "at '/gateway/metricsPort': minimum: got 0, want 1"],
    ['metrics.serviceMonitor.interval=often', "at '/metrics/serviceMonitor/interval': 'often' does not match pattern"],
    [
      'gateway.autoscaling.enabled=true,gateway.autoscaling.maxReplicas=1',
      'gateway.autoscaling.maxReplicas (1) must be at least gateway.autoscaling.minReplicas (2)',
    ],
  ];
  it.each(cases)('refuses %s with a message naming the value', async (set, message) => {
    const r = await helm(['template', 'svc', CHART, '--set', set]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(message);
    console.log(
      `--set ${set}: ${r.stderr
        .split('\n')
        .find((l) => l.includes(message))
        ?.trim()}`,
    );
  });
});

describe('what the rendered objects promise', () => {
  it("ships the CRDs of crds/ unchanged (helm installs them from the chart's crds/ folder)", () => {
    const repo = readdirSync(join(ROOT, 'crds'))
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    const chart = readdirSync(join(CHART, 'crds')).sort();
    expect(chart).toEqual(repo);
    for (const f of repo) {
      const same = readFileSync(join(CHART, 'crds', f), 'utf8') === readFileSync(join(ROOT, 'crds', f), 'utf8');
      expect(same, `charts/svc-gateway/crds/${f} differs from crds/${f}: run npm run crds (it writes both)`).toBe(true);
    }
  });

  it('grants the operator exactly the rules of operator/rbac/role.yaml, the Lease named as configured', () => {
    const repo = parse(readFileSync(join(ROOT, 'operator', 'rbac', 'role.yaml'), 'utf8')) as { rules: unknown[] };
    expect(find(defaults, 'Role', '-operator').rules).toEqual(repo.rules);
    const withName = JSON.parse(JSON.stringify(repo.rules).replaceAll('"svc-gateway-operator"', '"team-a-operator"')) as unknown[];
    expect(find(full, 'Role', '-operator').rules).toEqual(withName);
    expect(envOf(container(find(full, 'Deployment', '-operator')), 'SVC_LEASE_NAME')?.value).toBe('team-a-operator');
    expect(find(defaults, 'RoleBinding', '-operator')).toMatchObject({
      roleRef: { kind: 'Role', name: 'svc-svc-gateway-operator' },
      subjects: [{ kind: 'ServiceAccount', name: 'svc-svc-gateway-operator', namespace: 'ns1' }],
    });
  });

  it('runs the same entry points as the npm scripts', () => {
    const all = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    // The scripts `exec` node so that npm's signals reach the process; a container runs node itself.
    const scripts = Object.fromEntries(Object.entries(all).map(([k, v]) => [k, v.replace(/^exec /, '')]));
    const cmd = (name: string): string => container(find(full, 'Deployment', name)).command.join(' ');
    expect(cmd('-gateway')).toBe(scripts.gateway);
    expect(cmd('-operator')).toBe(scripts.operator);
    expect(cmd('-exporter')).toBe(`${scripts.exporter} --batch-size 1000`);
    expect(cmd('-console')).toBe(scripts.console);
  });

  it('releases the ApiKeys on uninstall: a pre-delete Job stops the operator and takes off its finalizer, with only those rights', () => {
    const hook = (kind: string): K8sObject => find(defaults, kind, '-uninstall');
    for (const kind of ['ServiceAccount', 'Role', 'RoleBinding', 'Job']) {
      expect(hook(kind).metadata.annotations?.['helm.sh/hook'], kind).toBe('pre-delete');
      expect(hook(kind).metadata.annotations?.['helm.sh/hook-delete-policy'], kind).toBe('before-hook-creation,hook-succeeded');
    }
    // The Job after its ServiceAccount and rights (helm creates hooks by weight).
    expect(Number(hook('Job').metadata.annotations?.['helm.sh/hook-weight'])).toBeGreaterThan(
      Number(hook('Role').metadata.annotations?.['helm.sh/hook-weight']),
    );
    expect(hook('Role').rules).toEqual([
      { apiGroups: ['apps'], resources: ['deployments/scale'], resourceNames: ['svc-svc-gateway-operator'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      { apiGroups: ['gateway.svc.dev'], resources: ['apikeys'], verbs: ['list', 'get', 'patch'] },
    ]);
    const job = container(hook('Job'));
    expect(job.command.join(' ')).toBe('node operator/uninstall.ts');
    expect(envOf(job, 'SVC_OPERATOR_DEPLOYMENT')?.value).toBe('svc-svc-gateway-operator');
    // The selector of the operator's pods, as its Deployment selects them.
    const selector = (find(defaults, 'Deployment', '-operator').spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
    expect(new Set(envOf(job, 'SVC_OPERATOR_SELECTOR')?.value?.split(','))).toEqual(new Set(Object.entries(selector).map(([k, v]) => `${k}=${v}`)));
    expect(envOf(job, 'REDIS_URL')?.valueFrom).toEqual(envOf(container(find(defaults, 'Deployment', '-operator')), 'REDIS_URL')?.valueFrom);
  });

  it('grants the console exactly the Role of console/rbac/role.yaml (no Secrets) and system:auth-delegator; the Ingress sends it the console paths', async () => {
    const [role, binding] = parseAllDocuments(readFileSync(join(ROOT, 'console', 'rbac', 'role.yaml'), 'utf8')).map((d) => d.toJS() as K8sObject);
    expect(find(defaults, 'Role', '-console').rules).toEqual(role?.rules);
    expect(JSON.stringify(role?.rules)).not.toContain('secrets');
    expect(find(defaults, 'ClusterRoleBinding', '-console')).toMatchObject({
      roleRef: (binding as unknown as { roleRef: unknown }).roleRef,
      subjects: [{ kind: 'ServiceAccount', name: 'svc-svc-gateway-console', namespace: 'ns1' }],
    });
    const d = find(full, 'Deployment', '-console');
    expect(['REDIS_URL', 'SVC_KEY_PEPPER', 'DATABASE_URL', 'WATCH_NAMESPACE', 'SVC_TRUST_PROXY'].map((n) => envOf(container(d), n) !== undefined)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    const ingress = find(full, 'Ingress', '-gateway').spec as {
      rules: Array<{ http: { paths: Array<{ path: string; backend: { service: { name: string } } }> } }>;
    };
    const to = Object.fromEntries(ingress.rules[0]?.http.paths.map((p) => [p.path, p.backend.service.name]) ?? []);
    expect(to).toMatchObject({
      '/': 'svc-svc-gateway-console',
      '/v1': 'svc-svc-gateway-gateway',
      '/dashboard': 'svc-svc-gateway-console',
      '/status': 'svc-svc-gateway-console',
      '/trust': 'svc-svc-gateway-console',
      '/billing': 'svc-svc-gateway-console',
      '/.well-known/security.txt': 'svc-svc-gateway-console',
    });
    expect(kinds(parseDocs(await template('ns1', [], ['console.enabled=false']))).filter((k) => k.includes('console'))).toEqual([]);
  });

  it('lets streams drain: preStop sleep, then SVC_DRAIN_SECONDS, inside terminationGracePeriodSeconds', () => {
    for (const [docs, sleep, drain] of [
      [defaults, 5, 60],
      [full, 10, 300],
    ] as const) {
      const d = find(docs, 'Deployment', '-gateway');
      const c = container(d);
      expect(c.lifecycle?.preStop?.exec?.command).toEqual(['sleep', String(sleep)]);
      expect(envOf(c, 'SVC_DRAIN_SECONDS')?.value).toBe(String(drain));
      expect(podSpec(d).terminationGracePeriodSeconds).toBe(sleep + drain + 15);
      expect(c.readinessProbe?.httpGet.path).toBe('/readyz');
      expect(c.livenessProbe?.httpGet.path).toBe('/healthz');
      expect(podSpec(d).topologySpreadConstraints).toHaveLength(2);
      expect(podSpec(d).automountServiceAccountToken).toBe(false);
    }
  });

  it("generates the pepper once and keeps it; existing Secrets replace the chart's", async () => {
    const pepper = find(defaults, 'Secret', '-pepper');
    expect(pepper.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    expect(Buffer.from(String((pepper.data as Record<string, string>).pepper), 'base64').toString()).toMatch(/^[A-Za-z0-9]{64}$/);
    const docs = parseDocs(
      await template(
        'ns1',
        [],
        ['redis.existingSecret=my-redis', 'redis.existingSecretKey=REDIS', 'postgres.existingSecret=my-pg', 'pepper.existingSecret=my-pepper'],
      ),
    );
    expect(docs.filter((d) => d.kind === 'Secret')).toEqual([]);
    const op = container(find(docs, 'Deployment', '-operator'));
    expect(envOf(op, 'REDIS_URL')?.valueFrom?.secretKeyRef).toEqual({ name: 'my-redis', key: 'REDIS' });
    expect(envOf(op, 'SVC_KEY_PEPPER')?.valueFrom?.secretKeyRef).toEqual({ name: 'my-pepper', key: 'pepper' });
    expect(envOf(container(find(docs, 'Deployment', '-exporter')), 'DATABASE_URL')?.valueFrom?.secretKeyRef).toEqual({ name: 'my-pg', key: 'url' });
    expect(envOf(container(find(docs, 'Deployment', '-gateway')), 'SVC_KEY_PEPPER')?.valueFrom?.secretKeyRef).toEqual({ name: 'my-pepper', key: 'pepper' });
  });

  it('test/e2e/kind.sh runs the same end-to-end body as the local node (kind itself cannot run here)', () => {
    const script = readFileSync(join(ROOT, 'test', 'e2e', 'kind.sh'), 'utf8');
    expect(script).toMatch(/E2E_CLUSTER=kind .*\\\n\s*npx vitest run test\/e2e\/node\.test\.ts/);
    const syntax = spawnSync('bash', ['-n', join(ROOT, 'test', 'e2e', 'kind.sh')], { encoding: 'utf8' });
    expect(syntax.status, syntax.stderr).toBe(0);
  });

  it('documents every value with its default in the chart README', () => {
    const FREE_FORM = new Set(['resources', 'podAnnotations', 'nodeSelector', 'affinity', 'labels', 'annotations', 'podSecurityContext', 'securityContext']);
    const leaves: string[] = [];
    const walk = (o: Record<string, unknown>, path: string): void => {
      for (const [k, v] of Object.entries(o)) {
        const p = path ? `${path}.${k}` : k;
        const nested = v !== null && typeof v === 'object' && !Array.isArray(v) && !FREE_FORM.has(k) && Object.keys(v).length > 0;
        if (nested) walk(v as Record<string, unknown>, p);
        else leaves.push(`| \`${p}\` | \`${JSON.stringify(v)}\` |`);
      }
    };
    walk(parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>, '');
    const rows = readFileSync(join(CHART, 'README.md'), 'utf8')
      .split('\n')
      .filter((l) => /^\| `/.test(l))
      .map((l) => l.split(' | ').slice(0, 2).join(' | ') + ' |');
    expect(rows).toEqual(leaves);
  });

  it('restarts the pods when a connection setting changes (checksum annotation)', async () => {
    const sum = (docs: K8sObject[], name: string): string | undefined =>
      (find(docs, 'Deployment', name).spec as { template: { metadata: { annotations?: Record<string, string> } } }).template.metadata.annotations?.[
        'checksum/connections'
      ];
    const moved = parseDocs(await template('ns1', [], ['redis.url=redis://redis-2:6379']));
    for (const name of ['-gateway', '-operator']) {
      expect(sum(defaults, name)).toMatch(/^[0-9a-f]{16}$/);
      expect(sum(moved, name)).not.toBe(sum(defaults, name));
    }
  });

  it("keeps the gateway's /metrics off the API: its own port and ClusterIP Service, scraped there, reachable from the cluster only", async () => {
    interface Port {
      name: string;
      port: number;
      targetPort: string | number;
    }
    interface Backend {
      service: { name: string; port: { name?: string; number?: number } };
    }
    interface Peer {
      namespaceSelector?: Record<string, unknown>;
      podSelector?: Record<string, unknown>;
    }
    interface Rule {
      ports: Array<{ port: string }>;
      from?: Peer[];
    }
    const withDefaultPolicy = parseDocs(
      await template('ns1', [], ['networkPolicy.enabled=true', 'metrics.serviceMonitor.enabled=true', 'ingress.enabled=true']),
    );
    for (const [docs, port] of [
      [defaults, 9090],
      [full, 9102],
      [withDefaultPolicy, 9090],
    ] as const) {
      const c = container(find(docs, 'Deployment', '-gateway'));
      expect(c.ports).toEqual([
        { name: 'http', containerPort: 8080, protocol: 'TCP' },
        { name: 'metrics', containerPort: port, protocol: 'TCP' },
      ]);
      expect(envOf(c, 'SVC_METRICS_PORT')?.value).toBe(String(port));
      expect(envOf(c, 'PORT')?.value).toBe('8080');
      // The probes stay on the API port: ready means the API answers.
      expect((c.readinessProbe?.httpGet as { port?: string } | undefined)?.port).toBe('http');
      // The API Service (a LoadBalancer in ci/full-values.yaml) carries the API port only.
      const api = (find(docs, 'Service', '-gateway').spec as { ports: Port[] }).ports;
      expect(api.map((p) => p.targetPort)).toEqual(['http']);
      const metrics = find(docs, 'Service', '-gateway-metrics').spec as { type: string; ports: Port[] };
      expect(metrics.type).toBe('ClusterIP');
      expect(metrics.ports).toEqual([{ name: 'metrics', port, targetPort: 'metrics', protocol: 'TCP' }]);
    }
    for (const docs of [full, withDefaultPolicy]) {
      // The ServiceMonitor scrapes ports named metrics only (the gateway's, operator's and exporter's), never http.
      const endpoints = (find(docs, 'ServiceMonitor', '').spec as { endpoints: Array<{ port: string; path: string }> }).endpoints;
      expect(endpoints.map((e) => [e.port, e.path])).toEqual([['metrics', '/metrics']]);
      // The Ingress sends only API paths (and the console's), and only to http ports: never /metrics, never a metrics Service.
      const ingress = find(docs, 'Ingress', '-gateway').spec as {
        rules: Array<{ http: { paths: Array<{ path: string; pathType: string; backend: Backend }> } }>;
      };
      const paths = ingress.rules.flatMap((r) => r.http.paths);
      expect(paths.length).toBeGreaterThan(0);
      for (const p of paths) {
        const toConsole = ['/', '/dashboard', '/status', '/trust', '/billing', '/.well-known/security.txt'].includes(p.path);
        expect(p.backend.service).toEqual({ name: toConsole ? 'svc-svc-gateway-console' : 'svc-svc-gateway-gateway', port: { name: 'http' } });
        // The landing page's / is Exact: it matches / alone, never /metrics.
        if (p.path === '/') expect(p.pathType).toBe('Exact');
        else expect('/metrics'.startsWith(p.path.replace(/\/$/, '') || '/')).toBe(false);
      }
      // The gateway's NetworkPolicy: the API port as gatewayFrom says; the metrics port from metricsFrom only.
      const rules = (find(docs, 'NetworkPolicy', '-gateway').spec as { ingress: Rule[] }).ingress;
      expect(rules.map((r) => r.ports.map((p) => p.port))).toEqual([['http'], ['metrics']]);
      const from = docs === full ? [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] : [{ namespaceSelector: {} }];
      for (const name of ['-gateway', '-operator']) {
        const rule = (find(docs, 'NetworkPolicy', name).spec as { ingress: Rule[] }).ingress.find((r) => r.ports.some((p) => p.port === 'metrics'));
        expect(rule?.from, name).toEqual(from);
      }
    }
  });

  it('runs no exporter without Postgres', () => {
    expect(defaults.filter((d) => d.metadata.name.includes('exporter'))).toEqual([]);
  });

  it('mounts a private CA for the OpenID provider only when asked (console.oidc.caBundle), trusted by the console alone', async () => {
    const oidc = ['console.oidc.issuer=https://idp.example.internal', 'console.oidc.clientId=svc-console'];
    const consolePod = async (set: string[]) => {
      const docs = parseDocs(await template('ns1', [], [...oidc, ...set]));
      const d = find(docs, 'Deployment', '-console');
      return {
        env: envOf(container(d), 'NODE_EXTRA_CA_CERTS')?.value,
        volumes: (podSpec(d) as unknown as { volumes: Array<{ name: string; configMap?: unknown }> }).volumes,
      };
    };
    const plain = await consolePod([]);
    expect(plain.env).toBeUndefined();
    expect(plain.volumes.map((v) => v.name)).not.toContain('oidc-ca');
    const withCa = await consolePod(['console.oidc.caBundle.existingConfigMap=idp-ca']);
    expect(withCa.env).toBe('/etc/svc-console/oidc-ca/ca.crt');
    expect(withCa.volumes.find((v) => v.name === 'oidc-ca')?.configMap).toEqual({ name: 'idp-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] });
    const gateway = container(
      find(parseDocs(await template('ns1', [], [...oidc, 'console.oidc.caBundle.existingConfigMap=idp-ca'])), 'Deployment', '-gateway'),
    );
    expect(envOf(gateway, 'NODE_EXTRA_CA_CERTS')).toBeUndefined();
  });

  it("sets the exporter's reconciliation interval (a drift is a MoneyDrift Event on the Account)", async () => {
    const env = async (set: string[]): Promise<string | undefined> =>
      envOf(
        container(find(parseDocs(await template('ns1', [], ['postgres.url=postgres://pg/usage', ...set])), 'Deployment', '-exporter')),
        'SVC_RECONCILE_SECONDS',
      )?.value;
    expect(await env([])).toBe('60');
    expect(await env(['exporter.reconcileSeconds=15'])).toBe('15');
  });

  it("caps the operator's V8 heap at 60% of its memory limit, so it collects before the kernel kills it", async () => {
    const heap = async (set: string[]): Promise<string | undefined> =>
      envOf(container(find(parseDocs(await template('ns1', [], set)), 'Deployment', '-operator')), 'NODE_OPTIONS')?.value;
    expect(await heap([])).toBe('--max-old-space-size=153'); // the default 256Mi
    expect(await heap(['operator.resources.limits.memory=1Gi'])).toBe('--max-old-space-size=614');
    expect(await heap(['operator.resources.limits.memory=512Mi'])).toBe('--max-old-space-size=307');
    // No limit, or one in units it does not read: V8's own sizing.
    expect(await heap(['operator.resources.limits=null'])).toBeUndefined();
    expect(await heap(['operator.resources.limits.memory=1G'])).toBeUndefined();
  });

  it('commits each call in the Postgres ledger before its answer ends only when asked (gateway.settleDurability)', async () => {
    const gatewayEnv = async (set: string[]): Promise<Array<{ name: string; value?: string; valueFrom?: unknown }>> =>
      (container(find(parseDocs(await template('ns1', [], set)), 'Deployment', '-gateway')) as { env: Array<{ name: string; value?: string }> }).env;
    const off = await gatewayEnv(['postgres.url=postgres://pg/usage']);
    expect(off.map((e) => e.name)).not.toContain('SVC_SETTLE_DURABILITY');
    // Postgres given: the gateways keep stored Responses there, whatever the settle durability.
    expect(off.find((e) => e.name === 'DATABASE_URL')?.valueFrom).toEqual({ secretKeyRef: { name: 'svc-svc-gateway-connections', key: 'postgres-url' } });
    const on = await gatewayEnv(['postgres.url=postgres://pg/usage', 'gateway.settleDurability=postgres']);
    expect(on.find((e) => e.name === 'SVC_SETTLE_DURABILITY')?.value).toBe('postgres');
    expect(on.find((e) => e.name === 'DATABASE_URL')?.valueFrom).toEqual({ secretKeyRef: { name: 'svc-svc-gateway-connections', key: 'postgres-url' } });
    await expect(template('ns1', [], ['gateway.settleDurability=postgres'])).rejects.toThrow(/settleDurability=postgres needs Postgres/);
    await expect(template('ns1', [], ['gateway.settleDurability=disk'])).rejects.toThrow(/settleDurability/);
  });

  it('gives the gateways the files retention (gateway.files.retentionDays), and refuses one below a day', async () => {
    const env = async (set: string[]): Promise<Array<{ name: string; value?: string }>> =>
      (container(find(parseDocs(await template('ns1', [], set)), 'Deployment', '-gateway')) as { env: Array<{ name: string; value?: string }> }).env;
    expect((await env([])).find((e) => e.name === 'SVC_FILES_RETENTION_DAYS')?.value).toBe('30');
    expect((await env(['gateway.files.retentionDays=7'])).find((e) => e.name === 'SVC_FILES_RETENTION_DAYS')?.value).toBe('7');
    await expect(template('ns1', [], ['gateway.files.retentionDays=0'])).rejects.toThrow(/retentionDays/);
  });

  it('runs evaluation stores only when asked (redis.deploy, postgres.deploy), marked not for production, and uses them', async () => {
    expect(defaults.filter((d) => /-(redis|postgres)$/.test(d.metadata.name))).toEqual([]);
    const docs = parseDocs(await template('ns1', [], ['redis.deploy=true', 'postgres.deploy=true']));
    for (const store of ['redis', 'postgres']) {
      const d = find(docs, 'Deployment', `-${store}`);
      expect(d.metadata.annotations?.['svc.dev/not-for-production']).toMatch(/^evaluation store/);
      expect((podSpec(d) as { securityContext?: { runAsNonRoot?: boolean } }).securityContext?.runAsNonRoot).toBe(true);
      expect(find(docs, 'Service', `-${store}`).metadata.name).toBe(`svc-svc-gateway-${store}`);
    }
    const connections = find(docs, 'Secret', '-connections') as K8sObject & { stringData: Record<string, string> };
    expect(connections.stringData).toEqual({ 'redis-url': 'redis://svc-svc-gateway-redis:6379' });
    const pg = find(docs, 'Secret', '-postgres') as K8sObject & { stringData: { password: string; url: string } };
    expect(pg.stringData.password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(pg.stringData.url).toBe(`postgres://svc:${pg.stringData.password}@svc-svc-gateway-postgres:5432/usage`);
    expect(envOf(container(find(docs, 'Deployment', '-exporter')), 'DATABASE_URL')?.valueFrom?.secretKeyRef).toEqual({
      name: 'svc-svc-gateway-postgres',
      key: 'url',
    });
    const notes = await helmOk(['install', 'svc', CHART, '--dry-run=client', '-n', 'ns1', '--set', 'redis.deploy=true', '--set', 'postgres.deploy=true']);
    expect(notes).toContain('EVALUATION STORES: Redis and Postgres run as single pods without persistence');
  });

  it('prints the first key and call as one block bash reads whole: the heredoc ends, every command is one bash runs', async () => {
    const out = await helmOk(['install', 'svc', CHART, '--dry-run=client', '-n', 'ns1']);
    const block = printedBlock(out, "kubectl apply -n ns1 -f - <<'YAML'");
    // bash -n reads without running: an unterminated heredoc is a warning there, and swallows the lines after it.
    const r = spawnSync('bash', ['-n'], { input: block, encoding: 'utf8' });
    expect({ code: r.status, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const after = block
      .slice(block.indexOf('\nYAML\n') + 6)
      .trim()
      .split('\n');
    // The commands after it (a continuation line aside): wait, the key, the port-forward, its wait, the call.
    expect(after.filter((l) => !l.startsWith(' ')).map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([
      'kubectl wait',
      'export KEY=$(kubectl',
      'kubectl port-forward',
      'for i',
      'curl http://127.0.0.1:8080/v1/chat/completions',
    ]);
  });

  it('ships the dashboards as ConfigMaps for the Grafana sidecar, one uid each', () => {
    const maps = full.filter((d) => d.kind === 'ConfigMap');
    const uids = new Set<string>();
    for (const m of maps) {
      expect(m.metadata.labels?.grafana_dashboard).toBe('1');
      expect(m.metadata.annotations).toEqual({ grafana_folder: 'AI gateway' });
      for (const [key, text] of Object.entries(m.data as Record<string, string>)) {
        expect(key).toMatch(/^svc-(traffic|spend)\.json$/);
        uids.add((JSON.parse(text) as { uid: string }).uid);
      }
    }
    expect([...uids].sort()).toEqual(['svc-gateway-spend', 'svc-gateway-traffic']);
  });
});

describe('Stripe settings of the console', () => {
  it('come from the Secret named in billing.stripe.existingSecret, with STRIPE_API_BASE optional, and no secret value in the manifests', async () => {
    const docs = parseDocs(
      await template(
        'ns1',
        [],
        ['billing.stripe.existingSecret=stripe-creds', 'billing.stripe.webhookSecretKey=whsec', 'billing.stripe.apiBase=http://stripe-mock:12111'],
      ),
    );
    const c = container(find(docs, 'Deployment', 'svc-svc-gateway-console'));
    expect(envOf(c, 'STRIPE_SECRET_KEY')).toEqual({
      name: 'STRIPE_SECRET_KEY',
      valueFrom: { secretKeyRef: { name: 'stripe-creds', key: 'STRIPE_SECRET_KEY' } },
    });
    expect(envOf(c, 'STRIPE_WEBHOOK_SECRET')).toEqual({ name: 'STRIPE_WEBHOOK_SECRET', valueFrom: { secretKeyRef: { name: 'stripe-creds', key: 'whsec' } } });
    expect(envOf(c, 'STRIPE_API_BASE')).toEqual({ name: 'STRIPE_API_BASE', value: 'http://stripe-mock:12111' });
    const text = JSON.stringify(docs);
    expect(text).not.toMatch(/sk_(test|live)_|whsec_/);
    expect(docs.filter((d) => d.kind === 'Secret').map((d) => d.metadata.name)).not.toContain('stripe-creds');
  });

  it('are absent by default (payments not set up)', () => {
    const c = container(find(defaults, 'Deployment', 'svc-svc-gateway-console'));
    for (const n of ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'STRIPE_API_BASE']) expect(envOf(c, n)).toBeUndefined();
  });

  it("the chart README's Role example grants manage-billing (and view-activity, the Activity page)", () => {
    expect(readFileSync(join(CHART, 'README.md'), 'utf8')).toContain('verbs: [get, manage-keys, view-usage, manage-billing, view-activity]');
  });
});
