// A real Postgres for a test file: a throwaway cluster (initdb + pg_ctl on a free loopback port, in a temp dir, as
// the `postgres` user when the tests run as root), or, when DATABASE_URL is given, a fresh database of its own on
// that server (dropped at the end). Never skipped: without the binaries it fails with how to get them.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './redis.ts';

const run = promisify(execFile);

export interface TestPostgres {
  /** Connection string of this test file's database. */
  url: string;
  /** A pool on that database for assertions. */
  pool: pg.Pool;
  /** Only a cluster this helper started can be stopped and started again. */
  owned: boolean;
  /** Stops the server (fast shutdown: open connections are cut), keeping its data. */
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  stop(): Promise<void>;
}

const HOW_TO_GET =
  'PostgreSQL server binaries are needed for these tests: install them (Debian/Ubuntu: ' +
  '`apt-get install postgresql`, which puts initdb and pg_ctl in /usr/lib/postgresql/<version>/bin; macOS: ' +
  '`brew install postgresql`), set PG_BIN to the folder holding initdb and pg_ctl, or set DATABASE_URL to a ' +
  'server where this user may CREATE DATABASE.';

function findBin(): string {
  const candidates = [
    process.env.PG_BIN,
    '/usr/lib/postgresql/17/bin',
    '/usr/lib/postgresql/16/bin',
    '/usr/lib/postgresql/15/bin',
    '/usr/lib/postgresql/14/bin',
    '/usr/local/bin',
    '/opt/homebrew/bin',
    '/usr/bin',
  ];
  for (const dir of candidates) if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  throw new Error(HOW_TO_GET);
}

/** Postgres refuses to run as root: then every server command runs as the `postgres` user. */
function asServerUser(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

async function serverCmd(cmd: string, args: string[]): Promise<string> {
  const [file, argv] = asServerUser(cmd, args);
  try {
    const { stdout, stderr } = await run(file, argv, { cwd: tmpdir(), timeout: 60_000 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
  }
}

function ownToServerUser(path: string): void {
  if (process.getuid?.() !== 0) return;
  chownSync(path, idOf('-u'), idOf('-g'));
}

/** The `postgres` user's uid or gid (`id` sees NSS users too, which /etc/passwd may not list). */
function idOf(flag: '-u' | '-g'): number {
  let out = '';
  try {
    out = execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim();
  } catch {
    // handled below
  }
  const n = Number(out);
  if (!out || !Number.isInteger(n)) throw new Error(`There is no \`postgres\` user to run Postgres as (it refuses to run as root). ${HOW_TO_GET}`);
  return n;
}

async function waitForServer(url: string): Promise<void> {
  const end = Date.now() + 30_000;
  for (;;) {
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return;
    } catch (err) {
      await c.end().catch(() => {});
      if (Date.now() > end) throw new Error(`Postgres did not answer at ${url}: ${String(err)}`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function createDatabase(serverUrl: string, name: string): Promise<void> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE "${name}"`);
  } finally {
    await c.end();
  }
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/**
 * `name` makes the database name readable; `own: true` for tests that stop and start the server; `host`: a server of
 * its own listening on that local address, open to its /24 (the e2e node's pods on the host's bridge address).
 */
export async function startPostgres(name: string, opts: { own?: boolean; host?: string } = {}): Promise<TestPostgres> {
  const db = `t_${name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const given = process.env.DATABASE_URL;
  if (given && !opts.own && !opts.host) {
    await createDatabase(given, db);
    const url = withDatabase(given, db);
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pool.on('error', () => {});
    const refuse = (): Promise<void> => Promise.reject(new Error('cannot stop a Postgres server this test did not start'));
    return {
      url,
      pool,
      owned: false,
      stopServer: refuse,
      startServer: refuse,
      stop: async () => {
        await pool.end();
        await dropDatabase(given, db);
      },
    };
  }
  return startCluster(db, opts.host ?? '127.0.0.1');
}

async function startCluster(db: string, host: string): Promise<TestPostgres> {
  const bin = findBin();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  chmodSync(dir, 0o755);
  ownToServerUser(dir);
  const data = join(dir, 'data');
  const port = await freePort();
  await serverCmd(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  if (host !== '127.0.0.1') appendFileSync(join(data, 'pg_hba.conf'), `host all all ${host.replace(/\.\d+$/, '.0')}/24 trust\n`);
  const options = [
    `-p ${port}`,
    `-c listen_addresses=${host}`,
    `-c unix_socket_directories=${dir}`,
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=100',
    '-c shared_buffers=64MB',
  ].join(' ');
  const start = (): Promise<string> => serverCmd(join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  const stopServer = async (): Promise<void> => {
    await serverCmd(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
  };
  await start();
  const server = `postgres://postgres@${host}:${port}/postgres`;
  await waitForServer(server);
  await createDatabase(server, db);
  const url = withDatabase(server, db);
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => {});
  return {
    url,
    pool,
    owned: true,
    stopServer,
    startServer: async () => {
      await start();
      await waitForServer(url);
    },
    stop: async () => {
      await pool.end().catch(() => {});
      await stopServer().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
