// Child processes of the test control plane: free loopback ports, logs to a file, waiting on a health URL,
// and a stop that never leaves a process behind (the exit hook covers a test run that dies without stop()).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { freePort } from '../helpers/host.ts';

export { freePort };

export interface Proc {
  name: string;
  child: ChildProcess;
  log: string;
  exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function startProcess(name: string, bin: string, args: string[], log: string): Proc {
  const fd = openSync(log, 'a');
  const child = spawn(bin, args, { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  running.add(child);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    });
    child.once('error', () => {
      running.delete(child);
      resolve(null);
    });
  });
  return { name, child, log, exited };
}

export function logTail(p: Proc, lines = 30): string {
  try {
    return readFileSync(p.log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Polls `probe` until it returns true; fails early if the process exits, with the end of its log. */
export async function waitUntilReady(p: Proc, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  let exitCode: number | null | undefined;
  void p.exited.then((code) => (exitCode = code));
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (exitCode !== undefined) throw new Error(`${p.name} exited (code ${exitCode}) before it was ready:\n${logTail(p)}`);
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${p.name} was not ready after ${timeoutMs} ms:\n${logTail(p)}`);
}

export async function stopProcess(p: Proc, graceMs = 10_000): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  await p.exited;
  clearTimeout(timer);
}
