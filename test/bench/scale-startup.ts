// npm run bench -- --scale-startup [--keys N]: how long a process takes to write the config to Redis
// (RedisStore.applyConfig: accounts with their credits, key records, revocations and expiries, the removal pass), on a
// throwaway redis-server and on a throwaway 3-master Redis Cluster, loopback only. Three passes each: into an empty
// Redis (a first start), the same config again (every later start or publish: idempotent, nothing changes), and a
// config where a tenth of the keys changed (some revoked, some gone, some new).
import { loadavg } from 'node:os';
import type { KeyRecord, Snapshot } from '../../gateway/contract/snapshot.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { startRedisCluster } from '../helpers/redis-cluster.ts';
import { redis } from './subjects.ts';

const KEYS_PER_ACCOUNT = 100;

export interface StartupConfig {
  snapshot: Snapshot;
  keys: KeyRecord[];
}

/** `keys` keys over keys/100 accounts, each account with a trial and two credits; deterministic. */
export function startupConfig(keys: number, version = 'bench-1'): StartupConfig {
  const accounts: Snapshot['accounts'] = {};
  const records: KeyRecord[] = [];
  for (let i = 0; i < keys; i++) {
    const account = `acct${Math.floor(i / KEYS_PER_ACCOUNT)}`;
    accounts[account] ??= {
      name: account,
      plan: 'p',
      trialCreditNano: 1_000_000_000,
      credits: [
        { id: 'c1', amountNano: 5_000_000_000 },
        { id: 'c2', amountNano: 7_000_000_000 },
      ],
    };
    records.push({
      hash: i.toString(16).padStart(64, '0'),
      name: `key${i}`,
      display: `sk-svc-…${String(i % 10_000).padStart(4, '0')}`,
      account,
      monthlyBudgetNano: i % 3 === 0 ? 10_000_000_000 : null,
      rpm: 600,
      tpm: 100_000,
      models: null,
      revoked: false,
      expiresAt: i % 5 === 0 ? Date.UTC(2030, 0, 1) : null,
    });
  }
  return { snapshot: { schema: 1, version, plans: {}, models: {}, accounts }, keys: records };
}

/** A tenth of the keys changed: every 30th revoked, every 30th (offset 10) gone, as many new ones. */
function changed(c: StartupConfig): StartupConfig {
  const keys = c.keys.flatMap((k, i) => (i % 30 === 10 ? [] : [i % 30 === 0 ? { ...k, revoked: true } : k]));
  const added = c.keys.filter((_, i) => i % 30 === 20).map((k) => ({ ...k, hash: `f${k.hash.slice(1)}`, name: `${k.name}-new` }));
  return { snapshot: { ...c.snapshot, version: 'bench-2' }, keys: [...keys, ...added] };
}

interface Timing {
  wallMs: number;
  /** CPU of this process (the writer's side), user and system. */
  cpuMs: number;
}

async function timed(f: () => Promise<void>): Promise<Timing> {
  const t = process.hrtime.bigint();
  const c = process.cpuUsage();
  await f();
  const used = process.cpuUsage(c);
  return { wallMs: Number(process.hrtime.bigint() - t) / 1e6, cpuMs: (used.user + used.system) / 1000 };
}

interface Row {
  where: string;
  cold: Timing;
  again: Timing;
  changed: Timing;
}

async function passes(where: string, connect: () => Promise<RedisStore>, keys: number, log: (l: string) => void): Promise<Row> {
  const store = await connect();
  try {
    const c = startupConfig(keys);
    log(`${where}: applying ${keys} keys into an empty Redis...`);
    const cold = await timed(() => store.applyConfig(c.snapshot, c.keys));
    log(`${where}: the same config again...`);
    const again = await timed(() => store.applyConfig(c.snapshot, c.keys));
    log(`${where}: a tenth of the keys changed...`);
    const d = changed(c);
    const ch = await timed(() => store.applyConfig(d.snapshot, d.keys));
    return { where, cold, again, changed: ch };
  } finally {
    await store.close();
  }
}

const s = (t: Timing): string => `${(t.wallMs / 1000).toFixed(2)} s (CPU ${(t.cpuMs / 1000).toFixed(2)} s)`;

export async function scaleStartup(keys: number, withCluster: boolean, log: (l: string) => void): Promise<string> {
  const rows: Row[] = [];
  const server = await redis();
  try {
    const url = `redis://127.0.0.1:${server.port}`;
    rows.push(await passes('one redis-server', () => RedisStore.connect({ url, prefix: 'bench', commandTimeoutMs: 10_000 }), keys, log));
  } finally {
    await server.stop();
  }
  if (withCluster) {
    const cluster = await startRedisCluster('bench-startup');
    try {
      const connect = (): Promise<RedisStore> => RedisStore.connect({ url: cluster.url, cluster: true, prefix: cluster.prefix, commandTimeoutMs: 10_000 });
      rows.push(await passes('Redis Cluster (3 masters)', connect, keys, log));
    } finally {
      await cluster.stop();
    }
  }
  const lines = [
    `applyConfig at ${keys} keys (${Math.ceil(keys / KEYS_PER_ACCOUNT)} accounts), load average at the end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    '',
    'Wall time, and in brackets the CPU time of the writing process (less sensitive to other work on the machine).',
    '',
    '| Redis | into an empty Redis | same config again | a tenth of the keys changed |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.where} | ${s(r.cold)} | ${s(r.again)} | ${s(r.changed)} |`),
  ];
  return lines.join('\n');
}
