// `npm start &` then `kill <pid>` as docs/getting-started.md says: the PID the shell gives is npm's, and the signal
// must reach the gateway, so that no gateway is left running (re-parented) holding the port.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { delimiter } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docText } from '../helpers/docs.ts';
import { ROOT } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';

/** A shell's PATH: no node_modules/.bin, so npm (not our PATH) finds the bundled Node, as for a reader. */
function readerPath(): string {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d !== '' && !d.includes('node_modules'));
  return ['/usr/local/bin', '/usr/bin', '/bin', ...dirs].join(delimiter);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

describe('npm start in the background, stopped with the PID the shell gives', () => {
  it('stops the gateway and frees its port on SIGTERM to npm', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: readerPath(), PORT: '0', SVC_METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
    for (const k of Object.keys(env)) if (k.startsWith('npm_')) delete env[k];
    const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const npmExit = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
    let gateway = 0;
    try {
      await until(() => /"pid":\d+.*"msg":"Server listening at http:\/\/127\.0\.0\.1:\d+"/.test(out), 90_000, `the gateway to listen:\n${out}`);
      const [, pid, port] = /"pid":(\d+).*"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/.exec(out) as RegExpExecArray;
      gateway = Number(pid);
      expect(gateway).not.toBe(npm.pid);
      expect(await portFree(Number(port))).toBe(false);

      npm.kill('SIGTERM');
      await npmExit;
      await until(() => !alive(gateway), 60_000, `the gateway (pid ${gateway}) to exit after npm got SIGTERM:\n${out}`);
      expect(await portFree(Number(port))).toBe(true);
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
      // A gateway left behind (the defect) is ours to end, not the next test's port conflict.
      if (gateway !== 0 && alive(gateway)) process.kill(gateway, 'SIGKILL');
    }
  }, 240_000);

  it('is how docs/getting-started.md says to stop it', () => {
    expect(docText('docs/getting-started.md')).toMatch(/kill %1/);
  });
});
