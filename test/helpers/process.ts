// Runs the gateway as a real process (node gateway/main.ts), as npm start does, and reads its output.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface GatewayProcess {
  /** The API port. */
  url: string;
  /** The metrics port (SVC_METRICS_PORT: /metrics, /healthz, /readyz); the API port does not serve /metrics. */
  metricsUrl: string;
  child: ChildProcess;
  output: () => string;
  /** Keys printed once at start, by ApiKey name. */
  keys: Record<string, string>;
  stop(): Promise<number | null>;
}

/** The environment of a child: ours, the defaults, then `env`, where an undefined value leaves the variable out. */
export function childEnv(defaults: Record<string, string>, env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const merged: Record<string, string | undefined> = { ...process.env, ...defaults, ...env };
  return Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
}

export async function startGatewayProcess(env: Record<string, string | undefined>, args: string[] = []): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['gateway/main.ts', ...args], {
    cwd: ROOT,
    env: childEnv({ PORT: '0', SVC_METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' }, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const [url, metricsUrl] = await new Promise<[string, string]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${out}`)), 90_000);
    const check = (): void => {
      const m = /svc-gateway listening on (http:\/\/\S+)/.exec(out) ?? /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      const metrics = /svc-gateway metrics on (http:\/\/\S+)\/metrics/.exec(out);
      if (m?.[1] && metrics?.[1]) {
        clearTimeout(timer);
        resolve([m[1], metrics[1]]);
      }
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.on('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${out}`)));
  });
  await new Promise((r) => setTimeout(r, 50));
  const keys: Record<string, string> = {};
  for (const m of out.matchAll(/^\s+(\S+)\s+account \S+\s+(sk-svc-\S+)$/gm)) keys[m[1] as string] = m[2] as string;
  return {
    url,
    metricsUrl,
    child,
    keys,
    output: () => out,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

export function runToExit(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['gateway/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', SVC_METRICS_PORT: '0', HOST: '127.0.0.1', ...env },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    // Bounds a hang only: a start on a loaded 2-core machine takes seconds.
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
