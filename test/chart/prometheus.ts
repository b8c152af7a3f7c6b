// A real Prometheus for a test: the `prometheus` binary (Debian package `prometheus`) on a free loopback port, with a
// temp config scraping the given targets every second and a temp TSDB. Never skipped: without it, how to get it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../helpers/redis.ts';

const HOW_TO_GET =
  'prometheus is needed for the dashboard tests: install it (Debian/Ubuntu: `apt-get install prometheus`; ' +
  '.ci/run does), or set SVC_PROMETHEUS to a prometheus binary (2.x or 3.x).';

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
  value: string;
}

export interface TestPrometheus {
  url: string;
  query(expr: string): Promise<Sample[]>;
  /** The alerts pending or firing now (/api/v1/alerts), from the `ruleFiles` it was started with. */
  alerts(): Promise<Alert[]>;
  /** Rule group evaluations so far (the latest lastEvaluation of every group, as ms since the epoch; 0: none yet). */
  lastEvaluation(): Promise<number>;
  /** Scrapes of every target so far (up{} samples), to wait for a few more. */
  scrapes(): Promise<number>;
  stop(): Promise<void>;
}

/** labels: target labels, as the ServiceMonitor's discovery adds them (namespace, container, pod); with `scrapeConfigs`
 * those jobs instead of the static targets (e.g. the pods a Service's endpoints name); `flags`: more command-line flags
 * (e.g. --enable-feature=exemplar-storage); `ruleFiles`: rules files (`groups:`) it evaluates every second. */
export async function startPrometheus(
  targets: string[],
  labels: Record<string, string> = {},
  scrapeConfigs?: object[],
  flags: string[] = [],
  ruleFiles: string[] = [],
): Promise<TestPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-prom-'));
  const port = await freePort();
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    stringify({
      global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
      scrape_configs: scrapeConfigs ?? [{ job_name: 'svc-gateway', static_configs: [{ targets, labels }] }],
      ...(ruleFiles.length > 0 ? { rule_files: ruleFiles } : {}),
    }),
  );
  const child: ChildProcess = spawn(
    process.env.SVC_PROMETHEUS || 'prometheus',
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn', ...flags],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  await new Promise<void>((resolve, reject) => {
    child.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new Error(HOW_TO_GET) : err));
    child.once('exit', (code) => reject(new Error(`prometheus exited with ${code}:\n${out}`)));
    const end = Date.now() + 30_000;
    const poll = (): void => {
      void fetch(`${url}/-/ready`)
        .then(
          (r) => r.ok,
          () => false,
        )
        .then((ok) => {
          if (ok) resolve();
          else if (Date.now() > end) reject(new Error(`prometheus not ready in 30 s:\n${out}`));
          else setTimeout(poll, 100);
        });
    };
    poll();
  });
  const query = async (expr: string): Promise<Sample[]> => {
    const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: Sample[] } };
    if (body.status !== 'success' || !body.data) throw new Error(`PromQL ${expr}: ${body.error ?? res.status}`);
    if (body.data.resultType !== 'vector') throw new Error(`PromQL ${expr}: a ${body.data.resultType}, not a vector`);
    return body.data.result;
  };
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}/api/v1/${path}`);
    const body = (await res.json()) as { status: string; error?: string; data?: T };
    if (body.status !== 'success' || !body.data) throw new Error(`GET /api/v1/${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    query,
    alerts: async () => (await api<{ alerts: Alert[] }>('alerts')).alerts,
    lastEvaluation: async () => {
      const { groups } = await api<{ groups: Array<{ lastEvaluation: string }> }>('rules');
      return Math.max(0, ...groups.map((g) => Date.parse(g.lastEvaluation)).filter((t) => Number.isFinite(t)));
    },
    scrapes: async () => Number((await query('sum(count_over_time(up[1h]))'))[0]?.value[1] ?? 0),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
