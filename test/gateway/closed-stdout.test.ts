// Issue 21, item 7: a gateway whose stdout is a pipe nobody reads any more (the reader went away: a log shipper
// restarted, `npm start | head`) still stops on SIGTERM. Its drain log lines cannot be written; the shutdown writes
// what it can within a bound and exits. Before, pino's flush at exit retried the failed write forever.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';

/** Far above the shutdown's own bounds (the idle drain, 2 s for the logs): reaching it means the process hung. */
const EXIT_WITHIN_MS = 10_000;

describe('SIGTERM with stdout a closed pipe', () => {
  it('exits with 0 after the drain instead of hanging on its log lines', async () => {
    const child = spawn(process.execPath, ['gateway/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', SVC_METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    try {
      await until(() => out.includes('admin token'), 20_000, `the gateway started (output so far: ${out}${err})`);
      // The reader goes away: every later write to stdout fails (EPIPE).
      child.stdout.destroy();
      child.kill('SIGTERM');
      const result = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), EXIT_WITHIN_MS))]);
      expect(result, `stderr: ${err}`).toEqual({ code: 0, signal: null });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 40_000);
});
