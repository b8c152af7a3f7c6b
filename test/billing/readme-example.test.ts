// The "several processes on one Redis" example of docs/operations.md, run as written (ports and paths moved out of the way).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.ts';
import { docExample } from '../helpers/docs.ts';
import { freePort } from '../helpers/redis.ts';

let group: number | undefined;
let redisPort = 0;
const dir = mkdtempSync(join(tmpdir(), 'svc-readme-'));

afterAll(async () => {
  if (group) {
    try {
      process.kill(-group, 'SIGTERM'); // the example's gateway processes, started in the script's process group
    } catch {
      // already gone
    }
  }
  if (redisPort) {
    const c = new Redis({ port: redisPort, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    c.on('error', () => {});
    await c
      .connect()
      .then(() => c.call('SHUTDOWN', 'NOSAVE'))
      .catch(() => {});
    c.disconnect();
  }
  rmSync(dir, { recursive: true, force: true });
});

it('runs two gateway processes on one Redis that share the spend, as docs/operations.md shows', async () => {
  redisPort = await freePort();
  const [a, b, ma, mb] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const script = docExample('docs/operations.md', 'redis-fleet')
    .replaceAll('6379', String(redisPort))
    .replaceAll('8081', String(a))
    .replaceAll('8082', String(b))
    .replaceAll('9091', String(ma))
    .replaceAll('9092', String(mb))
    .replaceAll('/tmp/svc-', `${dir}/svc-`)
    .replace('--daemonize yes', `--daemonize yes --dir ${dir}`);
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    group = child.pid;
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    const timer = setTimeout(() => reject(new Error(`the example did not finish:\n${text}`)), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(text);
      else reject(new Error(`the example exited with ${code}:\n${text}`));
    });
  });
  expect(out).toContain('"content":"Hello from mock-mini. You said: Hello"');
  const me = JSON.parse(out.slice(out.lastIndexOf('{"key"'))) as Record<string, unknown>;
  expect(me).toMatchObject({ account: 'team', monthly_budget_usd: 5, rpm_limit: 20 });
  expect(me.month_spend_usd).toBeGreaterThan(0);
  expect(me.balance_usd).toBe(11 - (me.month_spend_usd as number));
});
