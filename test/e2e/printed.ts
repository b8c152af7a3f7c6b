// Commands a user pastes from what helm printed (NOTES.txt), run as they are: the block cut out of the output without
// any change, given to `bash -c` with `kubectl` on PATH and the cluster in KUBECONFIG, as a user's shell has them.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The lines from the first that starts with `first` up to the next blank line, verbatim. NOTES.txt prints each block
 * to paste alone, ended by a blank line.
 */
export function printedBlock(output: string, first: string): string {
  const lines = output.split('\n');
  const start = lines.findIndex((l) => l.startsWith(first));
  if (start < 0) throw new Error(`No line starting with ${JSON.stringify(first)} in:\n${output}`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === '');
  return `${lines.slice(start, end < 0 ? undefined : end).join('\n')}\n`;
}

/** Fails with the reason when a port the printed commands use is taken on this machine. */
export async function portFree(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const s = createServer();
    s.once('error', (err) => reject(new Error(`Port ${port} on 127.0.0.1 is in use (${String(err)}): the printed commands forward it; free it and run again`)));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve()));
  });
}

/**
 * Runs `script` with bash as one pasted block. Whatever it left running in the background (a port-forward) is ended
 * with its process group once bash exits, or when `timeoutMs` passes.
 */
export async function runPasted(
  script: string,
  opts: { kubectl: string; kubeconfig: string; timeoutMs: number },
): Promise<{ code: number | null; out: string }> {
  const bin = mkdtempSync(join(tmpdir(), 'svc-e2e-path-'));
  symlinkSync(opts.kubectl, join(bin, 'kubectl'));
  try {
    const child = spawn('bash', ['-c', script], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: opts.kubeconfig, PATH: `${bin}:${process.env.PATH ?? ''}` },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const group = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // The group is already gone.
      }
    };
    // 'close' once every holder of the output pipes is gone: bash, then what it left running, ended here.
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const timer = setTimeout(group, opts.timeoutMs);
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    clearTimeout(timer);
    group();
    await closed;
    return { code, out };
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}
