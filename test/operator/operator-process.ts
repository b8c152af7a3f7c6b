// The operator as a real child process (node operator/main.ts), as a Deployment would run it; its log is JSON lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT } from '../helpers/process.ts';

export interface OperatorProcess {
  name: string;
  child: ChildProcess;
  /** Port of /healthz, /readyz, /metrics. */
  port: number;
  output(): string;
  /** Parsed log lines. */
  logs(): Array<Record<string, unknown>>;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
}

/**
 * Fast lease timing, for the tests of leader election only: a dead leader is replaced within about 3.5 s, and a
 * leader that cannot renew for 2 s exits, which a loaded machine can cause (the API server slow to answer).
 */
export const FAST_LEASE = { SVC_LEASE_DURATION_MS: '3000', SVC_LEASE_RENEW_DEADLINE_MS: '2000', SVC_LEASE_RETRY_PERIOD_MS: '500' };
/** The operator's own defaults (operator/main.ts --help): what every other test runs with. */
export const STEADY_LEASE = { SVC_LEASE_DURATION_MS: '15000', SVC_LEASE_RENEW_DEADLINE_MS: '10000', SVC_LEASE_RETRY_PERIOD_MS: '2000' };

/** Where the process runs: `cgroupProcs`, a cgroup's cgroup.procs, puts it in that cgroup before node starts. */
export interface OperatorPlacement {
  cgroupProcs?: string;
}

export async function startOperatorProcess(name: string, env: Record<string, string>, placement: OperatorPlacement = {}): Promise<OperatorProcess> {
  // In a cgroup: a shell joins it, then execs node (same pid), so V8 sizes its heap from the cgroup's limit.
  const [cmd, args] = placement.cgroupProcs
    ? ['/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', placement.cgroupProcs, process.execPath, 'operator/main.ts']]
    : [process.execPath, ['operator/main.ts']];
  const child = spawn(cmd, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', POD_NAME: name, LOG_LEVEL: 'info', ...STEADY_LEASE, ...env },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const logs = (): Array<Record<string, unknown>> =>
    out.split('\n').flatMap((l) => {
      try {
        return l.startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : [];
      } catch {
        return [];
      }
    });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const started = logs().find((l) => l.msg === 'Started operator');
      if (started) {
        clearInterval(timer);
        resolve(Number(started.port));
      }
    }, 20);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`operator ${name} exited with ${code} before it started:\n${out}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    name,
    child,
    port,
    exited,
    logs,
    output: () => out,
    kill: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
    metric: async (metric, labels = {}) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
      let sum = 0;
      for (const line of text.split('\n')) {
        const m = /^(\w+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
        if (m?.[1] === metric && want.every((w) => (m[2] ?? '').includes(w))) sum += Number(m[3]);
      }
      return sum;
    },
  };
}
