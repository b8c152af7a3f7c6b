// A real Redis Cluster for a test file: six `redis-server --cluster-enabled yes` processes on free loopback ports
// (3 masters, 3 replicas, made by `redis-cli --cluster create --cluster-replicas 1`), or REDIS_CLUSTER_URL when given
// (comma-separated seed nodes; then with a key prefix of its own). Never skipped: without redis-server it fails and
// says how to get it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis, type Cluster } from 'ioredis';
import { createRedis, scanAll } from '../../gateway/state/redis-connect.ts';
import { freePort } from './host.ts';
import { waitForPing, type TestRedis } from './redis.ts';

const run = promisify(execFile);

const HOW_TO_GET =
  'redis-server and redis-cli (7.0 or later) are needed for the Redis Cluster tests: install them (Debian/Ubuntu: ' +
  '`apt-get install redis-server redis-tools`, macOS: `brew install redis`) or set REDIS_CLUSTER_URL to the seed nodes of a Cluster you can use.';

export interface ClusterNode {
  port: number;
  /** Alive as far as this helper knows (false after kill). */
  alive: boolean;
  /** SIGKILL: no goodbye to the cluster, as a crashed machine. */
  kill(): Promise<void>;
  /** Starts a killed node again on its port and data dir: it rejoins the Cluster (a killed master as a replica). */
  restart(): Promise<void>;
  /** The redis-server process id while alive (to SIGSTOP a replica so that it lags behind). */
  pid(): number | undefined;
}

export interface TestRedisCluster {
  /** Comma-separated seed nodes, as REDIS_URL takes them with SVC_REDIS_CLUSTER=1. */
  url: string;
  prefix: string;
  /** A Cluster client for assertions. */
  client: Cluster;
  /** Only a cluster this helper started has nodes it can kill. */
  owned: boolean;
  nodes: ClusterNode[];
  /** The node serving `key`'s slot as master now. */
  masterOf(key: string): Promise<ClusterNode>;
  /** The live replica of a master. */
  replicaOf(master: ClusterNode): Promise<ClusterNode>;
  /** Waits until every live node says cluster_state:ok and every slot has a live master. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
  });
}

function spawnNode(port: number, busPort: number, dir: string, extra: string[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--cluster-port',
        String(busPort),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '2000',
        '--save',
        '',
        '--appendonly',
        'no',
        '--loglevel',
        'warning',
        '--repl-diskless-sync-delay',
        '0',
        ...extra,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new Error(HOW_TO_GET) : err));
    child.once('exit', (code) => reject(new Error(`redis-server (cluster node ${port}) exited with ${code}: ${out}`)));
    void waitForPing(port, 10_000).then(() => resolve(child), reject);
  });
}

async function clusterInfo(port: number): Promise<string> {
  const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, commandTimeout: 1000 });
  c.on('error', () => {});
  try {
    await c.connect();
    return String(await c.cluster('INFO'));
  } finally {
    c.disconnect();
  }
}

/** INFO replication of one node: a replica whose link to its master is not up yet cannot take over. */
async function replicaLinkDown(port: number): Promise<boolean> {
  const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, commandTimeout: 1000 });
  c.on('error', () => {});
  try {
    await c.connect();
    const info = String(await c.info('replication'));
    return info.includes('role:slave') && !info.includes('master_link_status:up');
  } finally {
    c.disconnect();
  }
}

async function clusterNodes(port: number): Promise<string> {
  const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, commandTimeout: 1000 });
  c.on('error', () => {});
  try {
    await c.connect();
    return String(await c.cluster('NODES'));
  } finally {
    c.disconnect();
  }
}

/** The port of the live master serving `slot` in a CLUSTER NODES table. */
function masterPortOf(table: string, slot: number): number | undefined {
  for (const line of table.split('\n')) {
    const f = line.split(' ');
    if (!f[2]?.includes('master') || f[2].includes('fail')) continue;
    const serves = f.slice(8).some((r) => {
      const [lo, hi] = r.split('-').map(Number);
      return lo !== undefined && slot >= lo && slot <= (hi ?? lo);
    });
    if (serves) return Number(f[1]?.split(':')[1]?.split('@')[0]);
  }
  return undefined;
}

/** `name` makes the prefix readable. `extraArgs` go to every redis-server (e.g. an ACL file). */
export async function startRedisCluster(name: string, opts: { extraArgs?: string[] } = {}): Promise<TestRedisCluster> {
  const prefix = `t-${name}-${randomBytes(4).toString('hex')}`;
  const given = process.env.REDIS_CLUSTER_URL;
  if (given) {
    const client = createRedis({ url: given, cluster: true }, { lazyConnect: false }) as Cluster;
    client.on('error', () => {});
    return {
      url: given,
      prefix,
      client,
      owned: false,
      nodes: [],
      masterOf: () => Promise.reject(new Error('cannot tell the nodes of a Cluster this test did not start')),
      replicaOf: () => Promise.reject(new Error('cannot tell the nodes of a Cluster this test did not start')),
      waitHealthy: async () => {},
      stop: async () => {
        for (const k of await scanAll(client, `${prefix}:*`)) await client.del(k);
        client.disconnect();
      },
    };
  }
  const root = mkdtempSync(join(tmpdir(), 'svc-redis-cluster-'));
  const children: Array<ChildProcess | null> = [];
  const nodes: ClusterNode[] = [];
  const stopAll = async (): Promise<void> => {
    for (const c of children) c?.kill('SIGKILL');
    await Promise.all(children.map((c) => (c ? exited(c) : undefined)));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 6; i++) {
      const port = await freePort();
      let busPort = await freePort();
      while (busPort === port) busPort = await freePort();
      const dir = join(root, `node-${i}`);
      mkdirSync(dir);
      const child = await spawnNode(port, busPort, dir, opts.extraArgs ?? []);
      children.push(child);
      const node: ClusterNode = {
        port,
        alive: true,
        kill: async () => {
          const c = children[i];
          node.alive = false;
          if (!c) return;
          c.kill('SIGKILL');
          await exited(c);
          children[i] = null;
        },
        restart: async () => {
          if (children[i]) return;
          children[i] = await spawnNode(port, busPort, dir, opts.extraArgs ?? []);
          node.alive = true;
        },
        pid: () => children[i]?.pid,
      };
      nodes.push(node);
    }
    try {
      await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'], {
        timeout: 60_000,
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(HOW_TO_GET, { cause: err });
      throw new Error(`redis-cli --cluster create failed: ${(err as { stderr?: string }).stderr ?? String(err)}`, { cause: err });
    }
  } catch (err) {
    await stopAll();
    throw err;
  }

  const waitHealthy = async (timeoutMs = 30_000): Promise<void> => {
    const end = Date.now() + timeoutMs;
    let last: string;
    for (;;) {
      try {
        const live = nodes.filter((n) => n.alive);
        const infos = await Promise.all(live.map((n) => clusterInfo(n.port)));
        const table = await clusterNodes(live[0]?.port ?? 0);
        const masters = table.split('\n').filter((l) => / master /.test(l.replace(/myself,/, '')) && !l.includes('fail') && / connected/.test(l));
        if (infos.every((i) => i.includes('cluster_state:ok')) && masters.length >= 3) return;
        last = infos.find((i) => !i.includes('cluster_state:ok')) ?? `${masters.length} live masters`;
      } catch (err) {
        last = String(err);
      }
      if (Date.now() > end) throw new Error(`the Redis Cluster did not become healthy: ${last.slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  try {
    await waitHealthy();
    // Replicas synced, so that a master killed by a test can be replaced.
    const end = Date.now() + 30_000;
    while ((await Promise.all(nodes.map((n) => replicaLinkDown(n.port)))).some(Boolean)) {
      if (Date.now() > end) throw new Error('the Redis Cluster replicas did not sync with their masters');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  const url = nodes.map((n) => `redis://127.0.0.1:${n.port}`).join(',');
  const client = createRedis({ url, cluster: true }, { lazyConnect: false, maxRetriesPerRequest: 3 }) as Cluster;
  client.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    client.once('ready', () => resolve());
    client.once('end', () => reject(new Error('the test client could not connect to the Redis Cluster')));
  });
  return {
    url,
    prefix,
    client,
    owned: true,
    nodes,
    waitHealthy,
    masterOf: async (key: string) => {
      const slot = Number(await client.cluster('KEYSLOT', key));
      const live = nodes.find((x) => x.alive);
      const port = live ? masterPortOf(await clusterNodes(live.port), slot) : undefined;
      const node = nodes.find((x) => x.port === port);
      if (!node) throw new Error(`no master found for slot ${slot}`);
      return node;
    },
    replicaOf: async (master: ClusterNode) => {
      for (const n of nodes.filter((x) => x.alive && x !== master)) {
        const c = new Redis({ port: n.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        c.on('error', () => {});
        try {
          await c.connect();
          if (String(await c.info('replication')).includes(`master_port:${master.port}\r`)) return n;
        } finally {
          c.disconnect();
        }
      }
      throw new Error(`no live replica of the master on port ${master.port}`);
    },
    stop: async () => {
      client.disconnect();
      await stopAll();
    },
  };
}

/**
 * A Redis Cluster in the shape of a TestRedis (its client is an ioredis Cluster: the same commands, one slot each).
 * It cannot be killed or restarted as a whole.
 */
export async function clusterAsTestRedis(name: string): Promise<TestRedis & { cluster: true }> {
  const c = await startRedisCluster(name);
  return {
    url: c.url,
    prefix: c.prefix,
    client: c.client as unknown as Redis,
    owned: false,
    cluster: true,
    stop: () => c.stop(),
    kill: () => Promise.reject(new Error('cannot kill a whole Redis Cluster')),
    restart: () => Promise.reject(new Error('cannot restart a whole Redis Cluster')),
  };
}

/** SVC_TEST_REDIS_CLUSTER=1 or REDIS_CLUSTER_URL: multi-process tests run on a Redis Cluster instead of one Redis. */
export function clusterWanted(): boolean {
  return process.env.SVC_TEST_REDIS_CLUSTER === '1' || Boolean(process.env.REDIS_CLUSTER_URL);
}
