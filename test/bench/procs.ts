// The bench's child processes: each server under test runs in its own process, started here, measured from
// the outside through /proc (CPU time and RSS, the same way for every subject, ours or not) and stopped by pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from '../helpers/host.ts';

export { freePort };

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on every Linux build this runs on). */
const CLK_TCK = 100;

export interface Proc {
  name: string;
  pid: number;
  /** The port matched from the process's output, or the one it was given. */
  port: number;
  output(): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Output that means "ready"; its first group, if any, is the port. */
  ready: RegExp;
  port?: number;
  timeoutMs?: number;
}

const running = new Set<Proc>();

export async function startProc(o: StartOptions): Promise<Proc> {
  const child: ChildProcess = spawn(o.command, o.args, { cwd: ROOT, env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer): void => {
    // Keep the head (start-up lines) and a tail: a chatty process must not grow the bench's memory.
    out = out.length < 64_000 ? out + d.toString() : out.slice(0, 32_000) + out.slice(-16_000) + d.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${o.name} did not start within ${o.timeoutMs ?? 30_000} ms:\n${out}`)), o.timeoutMs ?? 30_000);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    const check = (): void => {
      const m = o.ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      resolve(m[1] ? Number(m[1]) : (o.port ?? 0));
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', (code) => fail(new Error(`${o.name} exited with ${code}:\n${out}`)));
    child.once('error', (err) =>
      fail(
        new Error(
          `${o.name} could not start (${o.command}: ${err.message})${o.command === 'redis-server' ? '; install it: apt-get install redis-server' : ''}`,
        ),
      ),
    );
  });
  const proc: Proc = {
    name: o.name,
    pid: child.pid as number,
    port,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        running.delete(proc);
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
  running.add(proc);
  return proc;
}

/** Stops every process this module started (the bench's finally, and its signal handlers). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop()));
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** Resident set size in bytes. */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}
