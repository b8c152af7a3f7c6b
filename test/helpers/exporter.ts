// The usage exporter for tests: in process (fast, inspectable) or as a real child process (to SIGKILL it).
import { spawn, type ChildProcess } from 'node:child_process';
import { Registry } from 'prom-client';
import type pg from 'pg';
import { jsonLog } from '../../gateway/usage/exporter/log.ts';
import { startExporter, type RunningExporter } from '../../gateway/usage/exporter/start.ts';
import { ROOT } from './process.ts';
import { until } from './until.ts';

export interface InProcessExporter extends RunningExporter {
  registry: Registry;
  /** A metric's value summed over its label sets. */
  metric(name: string): Promise<number>;
}

export const FAST = { pollMs: 20, claimIdleMs: 500, claimEveryMs: 100, maintainEveryMs: 100, discoverEveryMs: 100, creditsEveryMs: 200 };

export async function exporterInProcess(redisUrl: string, databaseUrl: string, prefix: string, opts: Record<string, number> = {}): Promise<InProcessExporter> {
  const registry = new Registry();
  const running = await startExporter({ redisUrl, databaseUrl, prefix, registry, log: jsonLog('error'), ...FAST, ...opts });
  return { ...running, registry, metric: (name) => metricValue(registry, name) };
}

export async function metricValue(registry: Registry, name: string): Promise<number> {
  const m = registry.getSingleMetric(name);
  if (!m) throw new Error(`no metric ${name}`);
  const { values } = await m.get();
  return values.reduce((a, v) => a + v.value, 0);
}

export interface ExporterProcess {
  child: ChildProcess;
  url: Promise<string>;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function exporterProcess(env: Record<string, string>, args: string[] = []): ExporterProcess {
  const child = spawn(process.execPath, ['gateway/usage/exporter/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`exporter did not start:\n${out}`)), 20_000);
    child.stdout?.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`exporter exited with ${code}:\n${out}`)));
  });
  url.catch(() => {});
  return {
    child,
    url,
    output: () => out,
    kill: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}

/** Rows in usage_events, and event ids present more than once (must be none). */
export async function rowCounts(pool: pg.Pool): Promise<{ rows: number; distinct: number }> {
  const r = await pool.query<{ rows: number; distinct: number }>('SELECT count(*)::int AS rows, count(DISTINCT event_id)::int AS distinct FROM usage_events');
  return r.rows[0] as { rows: number; distinct: number };
}

export function waitFor(cond: () => Promise<boolean>, ms = 20_000, what = 'condition'): Promise<void> {
  return until(cond, ms, what, 50);
}
