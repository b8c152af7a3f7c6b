// A real Redis for a test file: a throwaway redis-server on a free loopback port with a temp dir, or REDIS_URL when
// given (then with a key prefix of its own, so test files can run in parallel on one server). Never skipped.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './host.ts';

export { freePort };

export interface TestRedis {
  url: string;
  /** Key prefix for this test file's stores and gateway processes. */
  prefix: string;
  /** A plain client for assertions and for stalling the server (DEBUG SLEEP, CLIENT PAUSE). */
  client: Redis;
  /** Only a server this helper started can be killed and restarted. */
  owned: boolean;
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const HOW_TO_GET =
  'redis-server is needed for these tests: install it (Debian/Ubuntu: `apt-get install redis-server`, ' +
  'macOS: `brew install redis`) or set REDIS_URL to a Redis you can use.';

function spawnServer(port: number, dir: string, host: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        host,
        ...(host === '127.0.0.1' ? [] : ['--protected-mode', 'no']),
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new Error(HOW_TO_GET) : err));
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
    void waitForPing(port, 10_000, host).then(() => resolve(child), reject);
  });
}

/** Waits until a redis-server on the port answers PING (bounded). */
export async function waitForPing(port: number, timeoutMs = 10_000, host = '127.0.0.1'): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const c = new Redis({ port, host, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.ping();
      c.disconnect();
      return;
    } catch (err) {
      c.disconnect();
      if (Date.now() > end) throw new Error(`redis-server did not answer on port ${port}`, { cause: err });
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

function exited(child: ChildProcess | null): Promise<void> {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
  });
}

/**
 * `name` makes the prefix readable; pass `own: true` for tests that stall or kill the server; `host`: a server of its
 * own listening on that local address instead of loopback (the e2e node's pods reach the host's bridge address).
 */
export async function startRedis(name: string, opts: { own?: boolean; host?: string } = {}): Promise<TestRedis> {
  const host = opts.host ?? '127.0.0.1';
  const prefix = `t-${name}-${randomBytes(4).toString('hex')}`;
  const given = process.env.REDIS_URL;
  if (given && !opts.own && !opts.host) {
    const client = new Redis(given);
    return {
      url: given,
      prefix,
      client,
      owned: false,
      kill: () => Promise.reject(new Error('cannot kill a Redis this test did not start')),
      restart: () => Promise.reject(new Error('cannot restart a Redis this test did not start')),
      stop: async () => {
        const keys = await client.keys(`${prefix}:*`);
        for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
        client.disconnect();
      },
    };
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  let child: ChildProcess | null = await spawnServer(port, dir, host);
  const client = new Redis({ port, host, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  const kill = async (): Promise<void> => {
    child?.kill('SIGKILL');
    await exited(child);
    child = null;
  };
  return {
    url: `redis://${host}:${port}`,
    prefix,
    client,
    owned: true,
    kill,
    restart: async () => {
      await kill();
      child = await spawnServer(port, dir, host);
    },
    stop: async () => {
      client.disconnect();
      child?.kill('SIGTERM');
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
