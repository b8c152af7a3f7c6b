// The path users take, end to end on a real Kubernetes node: the image built from the Dockerfile, the chart installed
// with helm as its README says, the docs' Plan/Account/ApiKey/ModelRoute (docs/kubernetes.md) applied with kubectl, calls made with the
// official SDKs through the gateway Service. One body for both clusters (cluster.ts): the local node of `npm test`
// (test/e2e/local-cluster.sh, no Docker) and kind (test/e2e/kind.sh). The steps run in order and share the install.
// Upstream models are the one fake (test/fakes, on the host); Redis and Postgres are real servers on the host, reached
// by the pods through the node's address.
import Anthropic from '@anthropic-ai/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { ROOT, startGatewayProcess } from '../helpers/process.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { docExample } from '../helpers/docs.ts';
import { until } from '../helpers/until.ts';
import { apiKey } from '../helpers/manifests.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';
import { callOfKind, mixedTraffic, script, trafficManifests, type Upstreams } from '../helpers/usage-traffic.ts';
import { CHART, findHelm } from '../chart/helm.ts';
import { startPrometheus, type TestPrometheus } from '../chart/prometheus.ts';
import { expectAccessible, launchBrowser } from '../console/browser.ts';
import { e2eCluster, type E2eCluster, type Forward } from './cluster.ts';
import { portFree, printedBlock, runPasted } from './printed.ts';
import { CA_CONFIGMAP, CLIENT_SECRET_SECRET, discoveryStatus, PROVIDER, providerPod, providerService, throwawayCa } from './oidc-in-cluster.ts';

const NS = 'svc-gateway';
const RELEASE = 'svc-gateway';
const GATEWAY = `${RELEASE}-gateway`;
const MODEL = 'gpt-4o-mini';

let cluster: E2eCluster;
let redis: TestRedis;
let db: TestPostgres;
let upstream: FakeUpstream;
/** An MCP server (the official SDK's) on the host, behind an McpServer: it answers only with its own credential. */
let mcp: SdkUpstream;
/** The key of step 3b's agent, which may call the McpServer `tools` (the dashboard step calls it again). */
let mcpAgentKey: string | undefined;
const MCP_TOKEN = 'mcp-upstream-credential-e2e-91b4';
let gateway: Forward;
let key = '';
/** What `helm install` printed (its NOTES), and the key the NOTES' block made. */
let installOutput = '';
let notesKey = '';
const opened: Forward[] = [];
const figures: Record<string, string> = {};

function run(cmd: string, args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { cwd: ROOT, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr });
    });
    // A command that does not read its input may exit first: no EPIPE.
    child.stdin?.on('error', () => {});
    child.stdin?.end(opts.input ?? '');
  });
}

async function kubectl(args: string[], input?: string): Promise<string> {
  const r = await run(cluster.kubectl, [`--kubeconfig=${cluster.cp.kubeconfig}`, ...args], { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.out}`);
  return r.out;
}

async function kjson<T>(args: string[]): Promise<T> {
  return JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
}

async function helm(args: string[], timeoutMs = 600_000): Promise<string> {
  const env = ['HELM_CACHE_HOME', 'HELM_CONFIG_HOME', 'HELM_DATA_HOME'];
  const r = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile(
      findHelm(),
      [`--kubeconfig=${cluster.cp.kubeconfig}`, ...args],
      { cwd: ROOT, timeout: timeoutMs, env: { ...process.env, ...Object.fromEntries(env.map((e) => [e, `/tmp/svc-helm/${e}`])) } },
      (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr }),
    );
  });
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed:\n${r.out}\n${await diagnose()}`);
  return r.out;
}

/** What a failing step shows: the pods, recent events, the operator's and a gateway's last log lines. */
async function diagnose(): Promise<string> {
  const out: string[] = [];
  for (const args of [
    ['get', 'pods', '-n', NS, '-o', 'wide'],
    ['get', 'events', '-n', NS, '--sort-by=.lastTimestamp'],
    ['logs', '-n', NS, '-l', 'app.kubernetes.io/component=operator', '--tail=30', '--prefix'],
    ['logs', '-n', NS, '-l', 'app.kubernetes.io/component=gateway', '--tail=20', '--prefix'],
  ]) {
    const r = await run(cluster.kubectl, [`--kubeconfig=${cluster.cp.kubeconfig}`, ...args]);
    out.push(`$ kubectl ${args.join(' ')}\n${r.out.slice(-4000)}`);
  }
  return out.join('\n');
}

interface Pod {
  metadata: { name: string; creationTimestamp: string; labels: Record<string, string>; deletionTimestamp?: string };
  spec: { securityContext?: { runAsNonRoot?: boolean; runAsUser?: number }; containers: Array<{ name: string }> };
  status: {
    phase: string;
    podIP?: string;
    conditions?: Array<{ type: string; status: string; lastTransitionTime: string }>;
    containerStatuses?: Array<{ name: string; ready: boolean; restartCount: number; started?: boolean }>;
  };
}

async function pods(component?: string): Promise<Pod[]> {
  const selector = component ? ['-l', `app.kubernetes.io/component=${component}`] : [];
  const list = await kjson<{ items: Pod[] }>(['get', 'pods', '-n', NS, ...selector]);
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

interface ApiKeyObject {
  metadata: { name: string; finalizers?: string[] };
}

const ready = (p: Pod): boolean => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function reachPod(name: string, port: number): Promise<Forward> {
  const f = await cluster.reach(NS, `pod/${name}`, port);
  opened.push(f);
  return f;
}

/** A person who signs in to the console: a ServiceAccount with a Role on the named account, and a token for it. */
async function accountUser(name: string, accountName: string, verbs: string[]): Promise<string> {
  await kubectl(['create', 'serviceaccount', '-n', NS, name]);
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: `${name}-keys` },
    rules: [{ apiGroups: ['gateway.svc.dev'], resources: ['accounts'], resourceNames: [accountName], verbs }],
  };
  await apply([role]);
  await kubectl(['create', 'rolebinding', '-n', NS, `${name}-keys`, `--role=${name}-keys`, `--serviceaccount=${NS}:${name}`]);
  return (await kubectl(['create', 'token', '-n', NS, name, '--duration=1h'])).trim();
}

/** One URL per gateway pod (its API port), for checks that must reach every replica. */
async function gatewayPods(): Promise<Array<{ name: string; url: string }>> {
  const list = (await pods('gateway')).filter(ready);
  const out = [];
  for (const p of list) {
    out.push({ name: p.metadata.name, url: (await reachPod(p.metadata.name, 8080)).url });
  }
  return out;
}

async function chat(base: string, k: string, content = 'Hello'): Promise<number> {
  const r = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content }] }),
  }).catch(() => null);
  if (!r) return 0;
  await r.arrayBuffer();
  return r.status;
}

/** The scrape targets a ServiceMonitor on the release's metrics Services finds: their endpoints on the port `metrics`. */
async function metricsEndpoints(): Promise<Array<{ targets: string[]; labels: Record<string, string> }>> {
  interface Slice {
    metadata: { labels: Record<string, string> };
    ports: Array<{ name: string; port: number }> | null;
    endpoints: Array<{ addresses: string[]; conditions?: { ready?: boolean }; targetRef?: { name: string } }> | null;
  }
  const slices = await kjson<{ items: Slice[] }>(['get', 'endpointslices', '-n', NS, '-l', `app.kubernetes.io/instance=${RELEASE}`]);
  const out = [];
  for (const s of slices.items) {
    const port = s.ports?.find((p) => p.name === 'metrics')?.port;
    if (!port) continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      const service = s.metadata.labels['kubernetes.io/service-name'] ?? '';
      const pod = e.targetRef?.name ?? '';
      // The local node's pods are reachable from the host; on kind, through a port-forward to the pod.
      const address = cluster.kind === 'local' ? `${e.addresses[0]}:${port}` : new URL((await reachPod(pod, port)).url).host;
      // The ServiceMonitor's discovery also labels each target with its container (the chart names each after its process).
      const container = ['exporter', 'operator', 'gateway'].find((c) => service.startsWith(`${RELEASE}-${c}`)) ?? '';
      out.push({ targets: [address], labels: { namespace: NS, service, pod, container } });
    }
  }
  return out;
}

async function apply(docs: object[] | string): Promise<void> {
  // Secrets first: an ApiKey whose Secret does not exist yet gets one generated by the operator, and the Secret of
  // the key the test made would then be refused (AlreadyExists).
  const secretsFirst = (d: object[]): object[] => [
    ...d.filter((x) => (x as { kind?: string }).kind === 'Secret'),
    ...d.filter((x) => (x as { kind?: string }).kind !== 'Secret'),
  ];
  const text =
    typeof docs === 'string'
      ? docs
      : secretsFirst(docs)
          .map((d) => stringify(d))
          .join('---\n');
  await kubectl(['apply', '-n', NS, '-f', '-'], text);
}

async function secretKey(name: string): Promise<string> {
  let value = '';
  await until(
    async () => {
      const r = await run(cluster.kubectl, [`--kubeconfig=${cluster.cp.kubeconfig}`, 'get', 'secret', '-n', NS, name, '-o', 'jsonpath={.data.key}']);
      value = r.code === 0 ? Buffer.from(r.out.trim(), 'base64').toString() : '';
      return value.startsWith('sk-svc-');
    },
    60_000,
    `the operator generates Secret ${name}`,
    500,
  );
  return value;
}

/** Calls every gateway pod until each answers `status` for the key (bounded): a config change reached them all. */
async function everyPodAnswers(k: string, status: number, what: string): Promise<Record<string, number>> {
  // A new key is first known everywhere (GET /v1/me, no quota), so that the calls are one per pod (low-RPM keys).
  if (status === 200) await knownEverywhere(k);
  const all = await gatewayPods();
  const seen: Record<string, number> = {};
  await until(
    async () => {
      for (const p of all) seen[p.name] = await chat(p.url, k);
      return Object.values(seen).every((s) => s === status);
    },
    60_000,
    `${what}: every gateway pod answers ${status}`,
    250,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}; last answers: ${JSON.stringify(seen)}`);
  });
  return seen;
}

/** Every gateway pod knows the key (GET /v1/me: 200, no quota used). */
async function knownEverywhere(k: string): Promise<void> {
  const all = await gatewayPods();
  await until(
    async () =>
      (await Promise.all(all.map((p) => fetch(`${p.url}/v1/me`, { headers: { authorization: `Bearer ${k}` } }).then((r) => r.status)))).every((x) => x === 200),
    60_000,
    'every gateway pod knows the key (GET /v1/me)',
    250,
  );
}

const TUNABLES = ['vm.overcommit_memory', 'kernel.panic', 'kernel.panic_on_oops'];
let tunablesBefore = '';

beforeAll(async () => {
  // The kubelet changes these kernel tunables; local-cluster.sh down puts them back.
  tunablesBefore = (await run('sysctl', TUNABLES)).out;
  cluster = await e2eCluster();
  const host = cluster.hostAddress;
  [redis, db, upstream, mcp] = await Promise.all([
    startRedis('e2e', { host }),
    startPostgres('e2e', { host }),
    startFakeUpstream('openai', host),
    startSdkServer(MCP_TOKEN, { host }),
  ]);
}, 60 * 60_000);

afterAll(async () => {
  for (const f of opened) await f.close().catch(() => {});
  await gateway?.close().catch(() => {});
  Object.assign(figures, cluster?.timings);
  if (Object.keys(figures).length)
    console.log(
      `e2e figures (${cluster?.kind}):\n${Object.entries(figures)
        .map(([k, v]) => `  ${k}: ${v}`)
        .join('\n')}`,
    );
  await Promise.allSettled([upstream?.close(), mcp?.close(), redis?.stop(), db?.stop()]);
  await cluster?.stop();
}, 10 * 60_000);

describe.sequential(`the chart on a real node`, () => {
  let installStarted = 0;

  it(
    '1. helm install with the README values: every Deployment Available, every pod Ready, no restart, none as root',
    async () => {
      await kubectl(['create', 'namespace', NS]);
      // As the chart README: the Postgres URL in a Secret of yours, the Redis URL inline.
      await kubectl(['create', 'secret', 'generic', 'usage-db', '-n', NS, `--from-literal=url=${db.url}`]);
      installStarted = Date.now();
      installOutput = await helm([
        'install',
        RELEASE,
        CHART,
        '-n',
        NS,
        '--set',
        `image.repository=${cluster.image.repository}`,
        '--set',
        `image.tag=${cluster.image.tag}`,
        '--set',
        `image.pullPolicy=${cluster.image.pullPolicy}`,
        '--set',
        `redis.url=${redis.url}`,
        '--set',
        'postgres.existingSecret=usage-db',
        '-f',
        join(ROOT, 'test/e2e/small-values.yaml'),
        '--wait',
        '--timeout=10m',
      ]);
      figures['helm install --wait'] = `${((Date.now() - installStarted) / 1000).toFixed(1)} s`;

      const deployments = await kjson<{ items: Array<{ metadata: { name: string }; status: { conditions?: Array<{ type: string; status: string }> } }> }>([
        'get',
        'deployments',
        '-n',
        NS,
      ]);
      expect(deployments.items.map((d) => d.metadata.name).sort()).toEqual(
        [`${RELEASE}-console`, `${RELEASE}-exporter`, GATEWAY, `${RELEASE}-operator`].sort(),
      );
      for (const d of deployments.items) expect(d.status.conditions?.find((c) => c.type === 'Available')?.status, d.metadata.name).toBe('True');
      const all = await pods();
      expect(all.length).toBe(3 + 2 + 1 + 1);
      const starts: number[] = [];
      for (const p of all) {
        expect(ready(p), `${p.metadata.name} Ready`).toBe(true);
        for (const c of p.status.containerStatuses ?? []) expect(c.restartCount, `${p.metadata.name}/${c.name} restarts`).toBe(0);
        expect(p.spec.securityContext?.runAsNonRoot, p.metadata.name).toBe(true);
        // What the process really runs as, asked inside each container.
        const uid = await kubectl(['exec', '-n', NS, p.metadata.name, '--', 'node', '-e', 'process.stdout.write(`${process.getuid()}:${process.getgid()}`)']);
        expect(uid, `${p.metadata.name} uid:gid`).toBe('1000:1000');
        const readyAt = p.status.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime;
        starts.push((Date.parse(readyAt ?? '') - Date.parse(p.metadata.creationTimestamp)) / 1000);
      }
      figures['pod start (created to Ready), max'] = `${Math.max(...starts)} s (1 s resolution)`;
    },
    15 * 60_000,
  );

  it(
    "2. the README's Plan, Account, ApiKey, ModelRoute: the openai SDK (completion, stream) and the Anthropic SDK through the Service",
    async () => {
      // The README's example as written, its upstream pointed at the fake provider on the host.
      const example = docExample('docs/kubernetes.md', 'operator').replace('https://api.openai.com/v1', upstream.baseUrl);
      expect(example).toContain(upstream.baseUrl);
      await apply(example);
      key = await secretKey('ci-bot-key');
      gateway = await cluster.reach(NS, GATEWAY, 80);
      await until(async () => (await chat(gateway.url, key)) === 200, 60_000, 'the first call through the gateway Service answers 200', 250).catch(
        async (err: unknown) => {
          throw new Error(`${String(err)}\n${await diagnose()}`);
        },
      );
      figures['helm install to the first successful call'] = `${((Date.now() - installStarted) / 1000).toFixed(1)} s`;

      const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
      const { data, response } = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      expect(data.choices[0]?.message.content).toBe('Hello from the fake upstream.');
      expect(data.model).toBe(MODEL);
      expect(
        Object.fromEntries(['x-svc-upstream', 'x-svc-served-model', 'x-svc-original-model', 'x-svc-fallback'].map((h) => [h, response.headers.get(h)])),
      ).toEqual({ 'x-svc-upstream': 'openai', 'x-svc-served-model': MODEL, 'x-svc-original-model': MODEL, 'x-svc-fallback': 'false' });
      expect(upstream.calls.at(-1)?.headers.authorization).toBe('Bearer sk-your-openai-key');

      const streamed = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Stream' }], stream: true }).withResponse();
      expect(streamed.response.headers.get('x-svc-upstream')).toBe('openai');
      expect(streamed.response.headers.get('content-type')).toContain('text/event-stream');
      let text = '';
      for await (const chunk of streamed.data) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe('Hello from the fake upstream.');

      const anthropic = new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: key, authToken: null, maxRetries: 0 });
      const msg = await anthropic.messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
      expect(msg.content[0]?.type === 'text' && msg.content[0].text).toBe('Hello from the fake upstream.');
      expect(msg.usage.output_tokens).toBeGreaterThan(0);

      // The first key and call NOTES.txt shows after the install, pasted as printed: the block cut verbatim out of what
      // `helm install` printed, run by bash in one go (its waits are its own; the mock model: no upstream needed).
      const block = printedBlock(installOutput, `kubectl apply -n ${NS} -f - <<'YAML'`);
      expect(block).toContain('\nYAML\n');
      await portFree(8080);
      const pasted = await runPasted(block, { kubectl: cluster.kubectl, kubeconfig: cluster.cp.kubeconfig, timeoutMs: 5 * 60_000 });
      expect(pasted.code, pasted.out).toBe(0);
      const answer = pasted.out.split('\n').find((l) => l.includes('"choices"')) ?? '';
      const completion = JSON.parse(answer.slice(answer.indexOf('{'))) as { object: string; model: string; choices: unknown[] };
      expect({ object: completion.object, model: completion.model, choices: completion.choices.length }, pasted.out).toEqual({
        object: 'chat.completion',
        model: 'mock-mini',
        choices: 1,
      });
      notesKey = await secretKey('first-key-key');
    },
    5 * 60_000,
  );

  it(
    '3. three gateway replicas: an RPM limit exact across the pods; a revoke answered 401 by every pod',
    async () => {
      const limited = apiKey('rpm-probe', 'acme', { limits: { rpm: 5 } });
      await apply(limited.docs);
      const all = await gatewayPods();
      expect(all.length).toBe(3);
      await everyPodAnswers(limited.key, 200, 'the new key');
      // everyPodAnswers spent one call per pod: a fresh key for the burst, so the minute starts empty.
      const burst = apiKey('rpm-burst', 'acme', { limits: { rpm: 5 } });
      await apply(burst.docs);
      await knownEverywhere(burst.key);
      // 10x the limit at once, spread over the three pods.
      const statuses = await Promise.all(Array.from({ length: 50 }, (_, i) => chat((all[i % all.length] as { url: string }).url, burst.key, `burst ${i}`)));
      expect({ admitted: statuses.filter((s) => s === 200).length, limited: statuses.filter((s) => s === 429).length }).toEqual({ admitted: 5, limited: 45 });

      await kubectl(['patch', 'apikey', 'rpm-probe', '-n', NS, '--type=merge', '-p', '{"spec":{"revoked":true}}']);
      const seen = await everyPodAnswers(limited.key, 401, 'the revoke');
      expect(Object.keys(seen).length).toBe(3);
    },
    5 * 60_000,
  );
  it(
    '3b. an McpServer applied with kubectl: Ready, its tools called through every gateway pod and the Service with a key, its credential injected, each call one usage row at its price',
    async () => {
      const agent = apiKey('mcp-agent', 'acme');
      await apply([
        ...agent.docs,
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tools-token' }, stringData: { authorization: `Bearer ${MCP_TOKEN}` } },
        {
          apiVersion: 'gateway.svc.dev/v1alpha1',
          kind: 'McpServer',
          metadata: { name: 'tools' },
          spec: {
            url: mcp.url,
            headers: [{ name: 'Authorization', secretKeyRef: { name: 'tools-token', key: 'authorization' } }],
            tools: { exclude: ['admin_*'] },
            pricing: { perCallUsd: 0.001 },
          },
        },
      ]);
      // The operator accepted it: its Ready condition, as `kubectl get mcpservers` shows it.
      const readyCondition = async (): Promise<string | undefined> =>
        (await kjson<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(['get', 'mcpserver', '-n', NS, 'tools'])).status?.conditions?.find(
          (c) => c.type === 'Ready',
        )?.status;
      await until(async () => (await readyCondition()) === 'True', 60_000, 'the McpServer is Ready', 500).catch(async (err: unknown) => {
        throw new Error(`${String(err)}\n${await kubectl(['get', 'mcpserver', '-n', NS, 'tools', '-o', 'yaml'])}\n${await diagnose()}`);
      });
      await knownEverywhere(agent.key);
      mcpAgentKey = agent.key;
      const connect = async (url: string): Promise<Client> => {
        let client: Client | undefined;
        // Until the pod has the McpServer (the operator's config reaches each gateway through Redis).
        await until(
          async () => {
            const c = new Client({ name: 'e2e-agent', version: '1.0.0' });
            const ok = await c
              .connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${agent.key}` } } }))
              .then(() => true)
              .catch(() => false);
            if (ok) client = c;
            return ok;
          },
          60_000,
          `an MCP session at ${url}`,
          500,
        );
        return client as Client;
      };
      // Every gateway pod serves it...
      const all = await gatewayPods();
      for (const p of all) {
        const client = await connect(`${p.url}/mcp/tools`);
        expect((await client.callTool({ name: 'echo', arguments: { text: p.name } })).content).toEqual([{ type: 'text', text: p.name }]);
        await client.close();
      }
      // ...and so does the Service, whichever pod each request of the session lands on: /mcp with the tools prefixed.
      const client = await connect(`${gateway.url}/mcp`);
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['tools__echo', 'tools__fail', 'tools__grow', 'tools__notify', 'tools__slow']);
      expect((await client.callTool({ name: 'tools__echo', arguments: { text: 'through the Service' } })).content).toEqual([
        { type: 'text', text: 'through the Service' },
      ]);
      await client.close();
      expect(mcp.calls.filter((c) => c === 'echo')).toHaveLength(all.length + 1);
      expect(new Set(mcp.authorizations)).toEqual(new Set([`Bearer ${MCP_TOKEN}`]));
      // Each call is one usage row, exported by the exporter pod: endpoint mcp, the tool, its price (0.001 USD).
      const rows = async (): Promise<Array<{ endpoint: string; requested_model: string; upstream: string; status: number; cost_nano: string }>> =>
        (
          await db.pool.query<{ endpoint: string; requested_model: string; upstream: string; status: number; cost_nano: string }>(
            "SELECT endpoint, requested_model, upstream, status, cost_nano FROM usage_events WHERE api_key = 'mcp-agent'",
          )
        ).rows;
      await until(async () => (await rows()).length >= all.length + 1, 60_000, `${all.length + 1} usage rows for the MCP calls`, 500);
      const got = await rows();
      expect(got).toHaveLength(all.length + 1);
      for (const r of got)
        expect({ ...r, cost_nano: Number(r.cost_nano) }).toEqual({
          endpoint: 'mcp',
          requested_model: 'mcp:tools/echo',
          upstream: 'tools',
          status: 200,
          cost_nano: 1_000_000,
        });
    },
    5 * 60_000,
  );

  it(
    '4. helm upgrade (a rolling restart of the gateways) under steady calls: 0 failed, 0 usage rows lost or doubled',
    async () => {
      const steady = apiKey('steady', 'acme');
      await apply(steady.docs);
      await everyPodAnswers(steady.key, 200, 'the steady key');
      const before = (await gatewayPods()).map((p) => p.name).sort();
      // The SDK as users run it (its default retries: a keep-alive connection closed by a draining pod just as a call
      // goes out on it is retried, as every HTTP client must); the attempts are counted and reported.
      let attempts = 0;
      const counting: typeof fetch = (input, init) => {
        attempts++;
        return fetch(input, init);
      };
      const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: steady.key, fetch: counting });
      const outcome = { ok: 0, failed: [] as string[] };
      let stop = false;
      const loop = (async () => {
        for (let i = 0; !stop && i < 20_000; i++) {
          try {
            const r = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: `steady ${i}` }] });
            if (r.choices[0]?.message.content === 'Hello from the fake upstream.') outcome.ok++;
            else outcome.failed.push(`call ${i}: ${JSON.stringify(r)}`);
          } catch (err) {
            outcome.failed.push(`call ${i}: ${String(err)}`);
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      try {
        // As the chart README says: the CRDs first, then the upgrade (here it changes the gateways' log level).
        await kubectl(['apply', '--server-side', '-f', join(CHART, 'crds')]);
        await helm(['upgrade', RELEASE, CHART, '-n', NS, '--reuse-values', '--set', 'gateway.logLevel=debug', '--wait', '--timeout=10m']);
        await kubectl(['rollout', 'status', '-n', NS, `deployment/${GATEWAY}`, '--timeout=300s']);
        const okBefore = outcome.ok;
        await until(() => outcome.ok >= okBefore + 10, 60_000, 'ten more calls after the rollout', 100);
      } finally {
        stop = true;
        await loop;
      }
      const after = (await gatewayPods()).map((p) => p.name).sort();
      expect(
        after.filter((n) => before.includes(n)),
        'every gateway pod replaced',
      ).toEqual([]);
      const calls = outcome.ok + outcome.failed.length;
      figures['calls during the rolling upgrade'] = `${outcome.ok} succeeded, ${outcome.failed.length} failed, ${attempts - calls} attempts retried by the SDK`;
      expect(outcome.failed).toEqual([]);
      // The warm-up calls (one per pod) and the loop's: exactly one usage row each with status 200, exported by the
      // exporter pod; no event twice (a retried attempt refused by a draining pod may add a row of its own status).
      const want = before.length + outcome.ok;
      const rows = async (): Promise<{ ok: number; rows: number; distinct: number }> =>
        (
          await db.pool.query<{ ok: number; rows: number; distinct: number }>(
            "SELECT count(*) FILTER (WHERE status = 200)::int AS ok, count(*)::int AS rows, count(DISTINCT event_id)::int AS distinct FROM usage_events WHERE api_key = 'steady'",
          )
        ).rows[0] as { ok: number; rows: number; distinct: number };
      await until(async () => (await rows()).ok >= want, 60_000, `${want} usage rows for the steady key`, 500);
      const got = await rows();
      expect(got.ok).toBe(want);
      expect(got.distinct).toBe(got.rows);
    },
    20 * 60_000,
  );

  it(
    '5. the operator leader pod deleted: another operator takes the Lease; an apply still reaches every gateway',
    async () => {
      const holder = async (): Promise<string> =>
        (await kjson<{ spec: { holderIdentity?: string } }>(['get', 'lease', '-n', NS, 'svc-gateway-operator'])).spec.holderIdentity ?? '';
      const leader = await holder();
      const operators = (await pods('operator')).map((p) => p.metadata.name);
      expect(operators).toContain(leader);
      const standby = operators.find((n) => n !== leader);
      await kubectl(['delete', 'pod', '-n', NS, leader, '--wait=false']);
      // The standby usually takes over; under load the ReplicaSet's replacement pod may win the Lease first: either
      // way another live operator holds it.
      let next = '';
      await until(async () => ![leader, ''].includes((next = await holder())), 90_000, `another operator takes the Lease from ${leader}`, 500);
      expect((await pods('operator')).map((p) => p.metadata.name)).toContain(next);
      figures['new operator leader'] = next === standby ? 'the standby' : 'the replacement pod';
      const after = apiKey('after-failover', 'acme');
      await apply(after.docs);
      await everyPodAnswers(after.key, 200, 'an ApiKey applied after the failover');
      // The deleted pod is replaced: two operators again, the new one standing by.
      await kubectl(['rollout', 'status', '-n', NS, `deployment/${RELEASE}-operator`, '--timeout=180s']);
      expect((await pods('operator')).filter(ready).length).toBe(2);
    },
    5 * 60_000,
  );

  it(
    '6. the console: sign in with a ServiceAccount token, create a key in the page, call with it, revoke it: 401',
    async () => {
      const token = await accountUser('alice', 'acme', ['get', 'manage-keys', 'view-usage']);
      const consoleUrl = await cluster.reach(NS, `${RELEASE}-console`, 80);
      opened.push(consoleUrl);
      const browser: Browser = await launchBrowser();
      try {
        const context = await browser.newContext();
        context.setDefaultTimeout(20_000);
        const page = await context.newPage();
        await page.goto(`${consoleUrl.url}/dashboard/keys`);
        await page.getByLabel('Kubernetes token').fill(token);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(/\/dashboard\/keys/);
        await expect(page.getByText('Account: acme').count()).resolves.toBe(1);
        await page.getByLabel('Name', { exact: true }).fill('console-bot');
        await page.getByRole('button', { name: 'Create key' }).click();
        const made = await page.getByRole('dialog').getByLabel('Key').inputValue();
        expect(made).toMatch(/^sk-svc-/);
        await until(async () => (await chat(gateway.url, made)) === 200, 60_000, 'the gateway accepts the key made in the console', 250);
        await page.getByRole('link', { name: 'Done, close' }).click();
        await page.getByRole('link', { name: 'Revoke console-bot' }).click();
        await page.getByLabel('Type the key name to confirm').fill('console-bot');
        await page.getByRole('button', { name: 'Revoke key' }).click();
        await expect(page.getByRole('status').textContent()).resolves.toBe('Key console-bot is revoked.');
        await everyPodAnswers(made, 401, 'the key revoked in the console');
      } finally {
        await browser.close();
      }
    },
    5 * 60_000,
  );

  it(
    "7. Prometheus scrapes the pods' metrics ports (the ServiceMonitor's endpoints); every query of the shipped dashboard returns data",
    async () => {
      // Traffic of every kind the dashboard shows (fallbacks, upstream errors, cut streams, 429s), on accounts of its own.
      const [primary, secondary, backup] = await Promise.all(['primary', 'secondary', 'backup'].map((n) => startFakeUpstream(n, cluster.hostAddress)));
      const u: Upstreams = { primary: primary as FakeUpstream, secondary: secondary as FakeUpstream, backup: backup as FakeUpstream };
      let prom: TestPrometheus | undefined;
      try {
        script(u);
        const m = trafficManifests(u);
        const renamed = JSON.parse(
          JSON.stringify(m.docs).replaceAll('"acme"', '"dash-acme"').replaceAll('"globex"', '"dash-globex"').replaceAll('"builder"', '"dash-plan"'),
        ) as object[];
        // And a key whose budget the first call spends: budget-refused calls (402) for the refusals panel.
        const capped = apiKey('capped', 'dash-globex', { monthlyBudgetUsd: 0.000001 });
        // And a Guardrail that only logs (every prompt of this traffic says `kind:`), for the dashboard's Guardrails row.
        const logOnly = {
          apiVersion: 'gateway.svc.dev/v1alpha1',
          kind: 'Guardrail',
          metadata: { name: 'dash-log' },
          spec: { selector: { accounts: ['dash-*'] }, checks: [{ name: 'kinds', detector: 'words', words: ['kind'], action: 'log' }] },
        };
        await apply([...renamed, ...capped.docs, logOnly]);
        // The metrics Services' endpoints on the port named `metrics`, as the chart's ServiceMonitor selects them (Debian's
        // Prometheus has no Kubernetes service discovery built in: the test reads the EndpointSlices the way it would).
        let targets = await metricsEndpoints();
        await until(async () => (targets = await metricsEndpoints()).length === 6, 120_000, 'six ready metrics endpoints', 1000).catch(() => {});
        expect(targets.map((t) => t.labels.service).sort()).toEqual(
          [...Array(3).fill(`${GATEWAY}-metrics`), `${RELEASE}-exporter-metrics`, ...Array(2).fill(`${RELEASE}-operator-metrics`)].sort(),
        );
        prom = await startPrometheus([], {}, [{ job_name: 'svc-gateway', static_configs: targets }]);
        const urls = (await gatewayPods()).map((p) => p.url);
        for (const k of [m.keys.a1, m.keys.a2, m.keys.b1, m.keys.limited, capped.key]) await knownEverywhere(k);
        for (let wave = 0; wave < 2; wave++) {
          await mixedTraffic(urls, m.keys, 40, 4);
          for (let i = 0; i < 3; i++) await callOfKind(urls[i % urls.length] as string, capped.key, 'ok', i);
          // Tool calls on every pod, for the dashboard's MCP row (the pods restarted since step 3b: their counters too).
          if (mcpAgentKey === undefined) throw new Error('step 3b did not run: the MCP row of the dashboard has no traffic');
          for (const u of urls) {
            const client = new Client({ name: 'e2e-dashboard', version: '1.0.0' });
            await client.connect(
              new StreamableHTTPClientTransport(new URL(`${u}/mcp/tools`), { requestInit: { headers: { Authorization: `Bearer ${mcpAgentKey}` } } }),
            );
            await client.callTool({ name: 'echo', arguments: { text: 'dashboard' } });
            await client.close();
          }
          const seen = await prom.scrapes();
          await until(async () => (await (prom as TestPrometheus).scrapes()) >= seen + 3 * 6, 60_000, 'three more scrapes of every target', 500);
        }
        const jobs = await prom.query('count by (pod) (up{job="svc-gateway"} == 1)');
        expect(jobs.length, 'scraped pods: 3 gateways, 2 operators, 1 exporter').toBe(6);
        const dashboard = JSON.parse(readFileSync(join(CHART, 'dashboards', 'traffic.json'), 'utf8')) as {
          panels: Array<{ title: string; targets?: Array<{ refId: string; expr?: string }> }>;
        };
        const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => (t.expr ? [{ what: `${p.title}/${t.refId}`, expr: t.expr }] : [])));
        expect(queries.length).toBeGreaterThan(20);
        const empty: string[] = [];
        for (const q of queries) {
          const expr = q.expr.replaceAll('$namespace', NS).replaceAll('$__rate_interval', '1m');
          const samples = await prom.query(expr);
          if (!samples.some((s) => Number.isFinite(Number(s.value[1])))) empty.push(`${q.what}: ${expr}`);
        }
        expect(empty, 'dashboard queries without data').toEqual([]);
        figures['dashboard queries with data'] = `${queries.length} of ${queries.length}`;
      } finally {
        await prom?.stop();
        await Promise.allSettled([primary?.close(), secondary?.close(), backup?.close()]);
      }
    },
    10 * 60_000,
  );

  // The local node only: the provider's pod mounts this machine's node_modules, and the browser reaches its Service's
  // address directly (on kind the host reaches neither; kind.sh's run leaves this step out).
  it.runIf(process.env.E2E_CLUSTER !== 'kind')(
    '7b. the console signs in through an OpenID provider running in the cluster (the chart with console.oidc, a private CA): the group’s account only',
    async () => {
      const client = { id: 'svc-console', secret: 'e2e-oidc-client-secret-5f1c0a' };
      const consoleUrl = await cluster.reach(NS, `${RELEASE}-console`, 80);
      opened.push(consoleUrl);
      // The Service first: its ClusterIP is the issuer's address, in the certificate the throwaway CA signs.
      await apply([providerService]);
      const ip = (await kjson<{ spec: { clusterIP: string } }>(['get', 'service', '-n', NS, PROVIDER])).spec.clusterIP;
      const issuer = `https://${ip}`;
      const tls = await throwawayCa(ip);
      await kubectl(['create', 'secret', 'generic', CLIENT_SECRET_SECRET, '-n', NS, `--from-literal=client-secret=${client.secret}`]);
      await apply([
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `${PROVIDER}-tls` },
          type: 'kubernetes.io/tls',
          stringData: { 'tls.crt': tls.cert, 'tls.key': tls.key },
        },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CA_CONFIGMAP }, data: { 'ca.crt': tls.ca } },
      ]);
      try {
        await apply([
          providerPod({
            image: `${cluster.image.repository}:${cluster.image.tag}`,
            issuer,
            clientId: client.id,
            redirectUri: `${consoleUrl.url}/dashboard/login/oidc/callback`,
            users: { alice: { email: 'alice@example.com', groups: ['team-a'] }, bob: { email: 'bob@example.com', groups: ['team-b'] } },
          }),
        ]);
        await until(
          async () => (await discoveryStatus(issuer, tls.ca)) === 200,
          120_000,
          `the provider in the cluster answers discovery at ${issuer}`,
          500,
        ).catch(async (err: unknown) => {
          const r = await run(cluster.kubectl, [`--kubeconfig=${cluster.cp.kubeconfig}`, 'logs', '-n', NS, PROVIDER, '--tail=40']);
          throw new Error(`${String(err)}\n${r.out}\n${await diagnose()}`);
        });
        // Team A's RoleBinding grants one account; team B has none.
        await apply([
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'Role',
            metadata: { name: 'oidc-team-a' },
            rules: [{ apiGroups: ['gateway.svc.dev'], resources: ['accounts'], resourceNames: ['acme'], verbs: ['get', 'manage-keys', 'view-usage'] }],
          },
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'RoleBinding',
            metadata: { name: 'oidc-team-a' },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'oidc-team-a' },
            subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'oidc:team-a' }],
          },
        ]);
        // The chart's console.oidc values as docs/console.md shows them, with this issuer (the upgrade replaces the console pod).
        const started = Date.now();
        const example = docExample('docs/console.md', 'console-oidc-helm-values');
        expect(example).toContain('https://sso.example.com');
        const values = join(mkdtempSync(join(tmpdir(), 'svc-e2e-oidc-')), 'oidc-values.yaml');
        writeFileSync(values, example.replace('https://sso.example.com', issuer));
        await helm(['upgrade', RELEASE, CHART, '-n', NS, '--reuse-values', '-f', values, '--wait', '--timeout=10m']);
        figures['helm upgrade with console.oidc --wait'] = `${((Date.now() - started) / 1000).toFixed(1)} s`;
        // The upgrade replaced the console pod: its Service answers from the new pod once kube-proxy has its rules (until
        // then a connection may go to the old pod's address and hang), and the new pod's login page offers the provider.
        const loginPage = async (): Promise<string> =>
          fetch(`${consoleUrl.url}/dashboard/login`, { signal: AbortSignal.timeout(3000) })
            .then((r) => r.text())
            .catch(() => '');
        // The old pod gone altogether (a terminating pod can keep its Service rule a while: a browser's connection sent
        // there hangs), then the Service answering from the new pod several times in a row.
        await until(
          async () => (await kjson<{ items: Pod[] }>(['get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/component=console'])).items.length === 1,
          180_000,
          'the replaced console pod gone',
          1000,
        );
        let answered = 0;
        await until(
          async () => (answered = (await loginPage()).includes('Sign in with') ? answered + 1 : 0) >= 10,
          120_000,
          'the upgraded console offers the OIDC sign-in through its Service, ten times in a row',
          300,
        );
        const others = (await kjson<{ items: Array<{ metadata: { name: string } }> }>(['get', 'accounts', '-n', NS])).items
          .map((a) => a.metadata.name)
          .filter((n) => n !== 'acme');
        expect(others.length, 'other accounts exist, which team A must not see').toBeGreaterThan(0);

        const browser: Browser = await launchBrowser();
        try {
          // The browser accepts the provider's certificate of the private CA (the console trusts that CA alone, by
          // caBundle; the host's check above trusts it alone too).
          const signIn = async (login: string): Promise<{ page: Page; ms: number }> => {
            const context = await browser.newContext({ ignoreHTTPSErrors: true });
            context.setDefaultTimeout(30_000);
            const page = await context.newPage();
            await page.goto(`${consoleUrl.url}/dashboard/keys`);
            const t = Date.now();
            await page.getByRole('button', { name: 'Sign in with Example SSO' }).click();
            // A console that cannot reach or trust the provider answers with a page saying why: shown if so.
            await page
              .waitForURL((u) => u.origin === issuer)
              .catch(async (err: unknown) => {
                const shown = await page
                  .locator('body')
                  .innerText({ timeout: 5000 })
                  .catch(() => '');
                throw new Error(`${String(err)}\nthe console's page instead: ${shown}`);
              });
            await page.getByPlaceholder('Enter any login').fill(login);
            await page.getByPlaceholder('and password').fill('any password');
            await page.getByRole('button', { name: 'Sign-in' }).click();
            await page.getByRole('button', { name: 'Continue' }).click();
            await page.waitForURL(`${consoleUrl.url}/dashboard/keys`);
            return { page, ms: Date.now() - t };
          };
          const alice = await signIn('alice');
          figures['OIDC sign-in through the in-cluster provider (button to keys page)'] = `${(alice.ms / 1000).toFixed(1)} s`;
          await expect(alice.page.getByText('Signed in as alice@example.com').count()).resolves.toBe(1);
          await expect(alice.page.getByText('Account: acme').count()).resolves.toBe(1);
          await expect(alice.page.getByLabel('Account', { exact: true }).count()).resolves.toBe(0);
          await expectAccessible(alice.page, 'the keys page signed in through the in-cluster provider');
          // Her session acts: a key made in the page, recorded as hers, which the gateway then accepts.
          await alice.page.getByLabel('Name', { exact: true }).fill('alice-sso-key');
          await alice.page.getByRole('button', { name: 'Create key' }).click();
          const made = await alice.page.getByRole('dialog').getByLabel('Key').inputValue();
          expect(made).toMatch(/^sk-svc-/);
          await until(async () => (await chat(gateway.url, made)) === 200, 60_000, 'the gateway accepts the key made after the OIDC sign-in', 250);
          await alice.page.goto(`${consoleUrl.url}/dashboard/keys`);
          await expect(alice.page.getByRole('row', { name: /^alice-sso-key / }).textContent()).resolves.toContain('by alice@example.com');
          for (const other of others) expect((await alice.page.goto(`${consoleUrl.url}/dashboard/keys?account=${other}`))?.status(), other).toBe(403);
          // Bob's group has no RoleBinding: signed in, no account at all.
          const bob = await signIn('bob');
          await expect(bob.page.getByText('Signed in as bob@example.com').count()).resolves.toBe(1);
          expect(await bob.page.content()).not.toContain('acme');
          expect((await bob.page.goto(`${consoleUrl.url}/dashboard/keys?account=acme`))?.status()).toBe(403);
        } finally {
          await browser.close();
        }
        // The console's log names who signed in (user, prefixed groups, the provider's subject), and holds no
        // authorization code, token or client secret.
        const log = await kubectl(['logs', '-n', NS, '-l', 'app.kubernetes.io/component=console', '--tail=-1']);
        expect(log).toMatch(/"user":"alice@example.com","groups":\["oidc:team-a"\],"sub":"alice","msg":"Console sign-in \(OpenID Connect\)"/);
        expect(log).not.toMatch(/code=|eyJ|refresh_token/);
        expect(log).not.toContain(client.secret);
      } finally {
        // Gone before the uninstall step, which expects no pod but the release's.
        await kubectl(['delete', 'pod,service', '-n', NS, PROVIDER, '--ignore-not-found', '--wait=true']);
      }
    },
    15 * 60_000,
  );

  it(
    '8. helm uninstall (--wait, foreground) leaves only the CRDs, the ApiKeys and the pepper; the namespace then deletes; no key is usable',
    async () => {
      // One more key, made just before: every key of the installation answers 200 until the uninstall.
      const last = apiKey('last', 'acme');
      await apply(last.docs);
      await everyPodAnswers(last.key, 200, 'the last key');
      const keys = [key, notesKey, last.key];
      const names = (await kjson<{ items: ApiKeyObject[] }>(['get', 'apikeys', '-n', NS])).items.map((k) => k.metadata.name).sort();
      const started = Date.now();
      // --cascade=foreground: each Deployment goes only once its pods are gone, and --wait waits for that.
      await helm(['uninstall', RELEASE, '-n', NS, '--wait', '--cascade=foreground', '--timeout=5m']);
      figures['helm uninstall --wait --cascade=foreground'] = `${((Date.now() - started) / 1000).toFixed(1)} s`;
      const remaining = (await kjson<{ items: Pod[] }>(['get', 'pods', '-n', NS])).items.filter(
        (p) => p.metadata.labels['app.kubernetes.io/component'] !== 'uninstall',
      );
      expect(
        remaining.map((p) => p.metadata.name),
        'pods left when helm uninstall --wait returned',
      ).toEqual([]);
      // The hook's Job is deleted once it succeeded; its pod follows.
      await until(async () => (await kjson<{ items: unknown[] }>(['get', 'pods', '-n', NS])).items.length === 0, 180_000, 'every pod gone', 1000);
      const left = await kubectl([
        'get',
        'all,configmaps,secrets,serviceaccounts,roles,rolebindings,poddisruptionbudgets,networkpolicies,ingresses,horizontalpodautoscalers,jobs',
        '-n',
        NS,
        '-l',
        `app.kubernetes.io/instance=${RELEASE}`,
        '-o',
        'name',
      ]);
      expect(left.trim().split('\n').filter(Boolean)).toEqual([`secret/${RELEASE}-pepper`]);
      const cluster_ = await kubectl(['get', 'clusterroles,clusterrolebindings', '-l', `app.kubernetes.io/instance=${RELEASE}`, '-o', 'name']);
      expect(cluster_.trim()).toBe('');
      const crds = await kubectl(['get', 'crds', '-o', 'name']);
      for (const kind of ['plans', 'accounts', 'apikeys', 'modelroutes', 'incidents']) expect(crds).toContain(`${kind}.gateway.svc.dev`);
      // The ApiKeys stay (a re-install serves them again), without the finalizer only the operator removed.
      const after = (await kjson<{ items: ApiKeyObject[] }>(['get', 'apikeys', '-n', NS])).items;
      expect(after.map((k) => k.metadata.name).sort()).toEqual(names);
      expect(after.filter((k) => (k.metadata.finalizers ?? []).length > 0).map((k) => k.metadata.name)).toEqual([]);

      // What the user does next: delete the namespace. It goes (bounded: a stuck finalizer would hold it for good).
      const pepper = Buffer.from(
        (await kubectl(['get', 'secret', '-n', NS, `${RELEASE}-pepper`, '-o', 'jsonpath={.data.pepper}'])).trim(),
        'base64',
      ).toString();
      await kubectl(['delete', 'namespace', NS, '--wait=false']);
      await until(
        async () => (await run(cluster.kubectl, [`--kubeconfig=${cluster.cp.kubeconfig}`, 'get', 'namespace', NS])).code !== 0,
        180_000,
        `namespace ${NS} deleted`,
        1000,
      ).catch(async (err: unknown) => {
        throw new Error(
          `${String(err)}\n${await kubectl(['get', 'namespace', NS, '-o', 'yaml'])}\n${await kubectl(['get', 'apikeys', '-n', NS, '-o', 'yaml'])}`,
        );
      });
      // And the keys are usable nowhere: a gateway on the same Redis, with the same pepper, answers 401 to each.
      const probe = await startGatewayProcess({ REDIS_URL: redis.url, SVC_REDIS_PREFIX: 'svc', SVC_KEY_PEPPER: pepper, SVC_CONFIG_POLL_MS: '500' }, [
        '--cluster',
      ]);
      try {
        await until(async () => (await fetch(`${probe.metricsUrl}/readyz`)).status === 200, 60_000, 'the probe gateway has the config', 250);
        const answers: number[] = [];
        for (const k of keys) answers.push(await chat(probe.url, k));
        expect(answers, probe.output()).toEqual(keys.map(() => 401));
      } finally {
        await probe.stop();
      }
    },
    10 * 60_000,
  );

  it.runIf(process.env.E2E_CLUSTER !== 'kind')(
    'the local node goes down without leftovers: processes, mounts, netns, bridge, cgroups, iptables',
    async () => {
      await cluster.stop();
      const sh = async (script: string): Promise<string> => (await run('bash', ['-c', script])).out.trim();
      expect(await sh('ip -o link show svce2e0 2>/dev/null')).toBe('');
      expect(await sh('ip route | grep -E "^198[.]1[89][.]" || true')).toBe('');
      expect(await sh('findmnt -rn -o TARGET | grep -F /svc-e2e-node || true')).toBe('');
      expect(await sh('ls /run/netns 2>/dev/null | grep "^cni-" || true')).toBe('');
      expect(await sh('ls -d /sys/fs/cgroup/*/kubepods 2>/dev/null || true')).toBe('');
      expect(await sh('{ iptables-save; ip6tables-save; } 2>/dev/null | grep -c KUBE- || true')).toBe('0');
      expect(await sh('pgrep -f "[s]vc-e2e-node" || true')).toBe('');
      expect(await sh('ls /tmp/svc-e2e-node 2>/dev/null || true')).toBe('');
      expect((await run('sysctl', TUNABLES)).out).toBe(tunablesBefore);
    },
    5 * 60_000,
  );
});
