// Money survives a Redis Cluster that loses part of its data (docs/operations.md: "Redis lost its data"). Two
// standalone gateways with DATABASE_URL (each runs the usage exporter) on a 3-shard Cluster without persistence, three
// accounts (one per shard), steady calls on each; then
//   - a master with no replica is killed and comes back empty: its accounts' money, its key records and slot markers
//     are gone while the other shards keep theirs;
//   - a replica made to lag behind (SIGSTOPped while its master takes writes) is promoted after its master is killed:
//     its copy of the money misses the last settles, which the exporter had already copied to the ledger.
// Callers see only 503 store_unavailable with retry-after (never 401, never an answer on forgotten money), and
// afterwards Redis and the Postgres ledger agree to the nano-dollar per account; no credit or trial granted twice.
import { afterAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../gateway/contract/keys.ts';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import { redisKeys } from '../../gateway/contract/redis-keys.ts';
import type { RedisStore } from '../../gateway/state/redis-store.ts';
import { slotOf } from '../../gateway/state/slot-markers.ts';
import { setup } from '../billing/fixtures.ts';
import { countBy, FLEET_PEPPER, fleetStore, me, startFleet, type Fleet } from '../helpers/fleet.ts';
import { ledgerOf, steadyLoad, type Served } from '../helpers/money-loss.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-cluster.ts';
import { until } from '../helpers/until.ts';

// One account in each third of the slots (the three shards `redis-cli --cluster create` makes), one key each.
const third = (account: string): number => {
  const slot = slotOf(`{a:${account}}`);
  return slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2;
};
const names: string[] = [];
for (let i = 0; names.length < 3; i++) if (!names.some((m) => third(m) === third(`team-${i}`))) names.push(`team-${i}`);
const s = setup(
  names.map((name) => ({ name, spec: { trialCreditUsd: 1, credits: [{ id: 'topup-1', amountUsd: 10 }] } })),
  names.map((account) => ({ name: `k-${account}`, account, spec: { monthlyBudgetUsd: 5 } })),
);
const keyOf = (account: string): string => s.keys[`k-${account}`] as string;

interface World {
  cluster: TestRedisCluster;
  pg: TestPostgres;
  fleet: Fleet;
  store: RedisStore;
}
const open: Array<Partial<World>> = [];
async function close(w: Partial<World>): Promise<void> {
  open.splice(open.indexOf(w), 1);
  await w.store?.close().catch(() => {});
  await w.fleet?.stop().catch(() => {});
  await w.cluster?.stop();
  await w.pg?.stop();
}
afterAll(async () => {
  for (const w of [...open]) await close(w);
});

async function world(name: string): Promise<World> {
  const w: Partial<World> = {};
  open.push(w);
  w.cluster = await startRedisCluster(name);
  w.pg = await startPostgres(name.replace(/-/g, '_'));
  const redis = { url: w.cluster.url, prefix: w.cluster.prefix, cluster: true };
  w.fleet = await startFleet(2, redis, s.docs, { DATABASE_URL: w.pg.url, SVC_REDIS_TIMEOUT_MS: '500', SVC_RECONCILE_SECONDS: '0' });
  w.store = await fleetStore(redis);
  return w as World;
}

function load(w: World): { results: Map<string, Served[]>; stop: () => Promise<void> } {
  const loads = names.map((a) => [a, steadyLoad(() => w.fleet.urls, keyOf(a), 2)] as const);
  return { results: new Map(loads.map(([a, l]) => [a, l.results])), stop: () => Promise.all(loads.map(([, l]) => l.stop())).then(() => {}) };
}

const ok = (rs: readonly Served[], after = 0): number => rs.filter((r) => r.status === 200 && r.startedAt > after).length;

/** Only 503 store_unavailable with retry-after while Redis was repaired: never a 401, never another error. */
function onlyRetryable(all: Map<string, Served[]>): void {
  for (const [account, rs] of all) {
    const statuses = countBy(rs, (r) => r.status);
    console.log(`${account}: ${rs.length} calls, statuses ${JSON.stringify(statuses)}`);
    for (const r of rs.filter((x) => x.status !== 200)) {
      expect(r.status, `${account}: ${r.body}`).toBe(503);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'store_unavailable' } });
    }
  }
}

/** Redis, /v1/me and the Postgres ledger agree to the nano-dollar for every account; the credits once each. */
async function agree(w: World, all: Map<string, Served[]>): Promise<void> {
  for (const account of names) {
    // Settles done and exported: the two agree twice, a few seconds apart (a hold of a call answered 503 while its
    // admission's reply was lost stays open until its deadline, charging nothing).
    const same = async (): Promise<boolean> => (await ledgerOf(w.pg.pool, account, `k-${account}`)).spent === (await w.store.ledger(account)).spentNano;
    await until(same, 60_000, `${account}: Postgres caught up with Redis`);
    await new Promise((r) => setTimeout(r, 3000));
    await until(same, 60_000, `${account}: Postgres caught up with Redis (again)`);
    const ledger = await w.store.ledger(account);
    const record = await ledgerOf(w.pg.pool, account, `k-${account}`);
    const view = await w.store.view(account, `k-${account}`, Date.now());
    const served = ok(all.get(account)?.filter((r) => r.what === 'chat') ?? []);
    console.log(`${account}: ${served} calls served, ${record.rows} charged (${record.spent} nUSD) in Postgres and Redis`);
    expect(record.credits.map((c) => `${c.kind}:${c.credit_id}:${c.amount_nano}`).sort()).toEqual([
      `credit:topup-1:${10 * NANO_PER_USD}`,
      `trial::${NANO_PER_USD}`,
    ]);
    expect(ledger.creditedNano).toBe(11 * NANO_PER_USD);
    expect(ledger.spentNano).toBe(record.spent);
    expect(view.keyMonthSpendNano).toBe(record.keyMonth);
    expect(view.accountMonthSpendNano).toBe(record.keyMonth);
    const mine = await me(w.fleet.urls[0] as string, keyOf(account));
    expect(mine.body).toMatchObject({ balance_usd: (11 * NANO_PER_USD - record.spent) / NANO_PER_USD });
    // At most one charge per call served (none twice); the ones not charged were answered before the fault.
    expect(record.rows).toBeLessThanOrEqual(served);
    expect(ledger.openHolds).toBeLessThanOrEqual((all.get(account) ?? []).filter((r) => r.status !== 200).length);
  }
}

describe('a Redis Cluster shard loses its data under load', () => {
  it('a master without a replica comes back empty: 503 until its accounts and key records are rebuilt, then Redis and the ledger agree', async () => {
    const w = await world('mloss-shard');
    const { cluster, pg } = w;
    // The shard of the first key's record: it holds one of the accounts (one per shard) and that key record.
    const record = redisKeys(cluster.prefix).key(hashKey(keyOf(names[0] as string), FLEET_PEPPER));
    const victim = await cluster.masterOf(record);
    const lostAccounts: string[] = [];
    for (const a of names) if ((await cluster.masterOf(`${cluster.prefix}:{a:${a}}:acct`)) === victim) lostAccounts.push(a);
    expect(lostAccounts).toHaveLength(1);
    const markerLost = (await cluster.masterOf(redisKeys(cluster.prefix).moneyGeneration)) === victim;
    await (await cluster.replicaOf(victim)).kill(); // this shard has no replica from now on

    const traffic = load(w);
    for (const a of names) await until(() => ok(traffic.results.get(a) ?? []) >= 15, 60_000, `${a}: calls before the loss`);
    await until(async () => (await ledgerOf(pg.pool, lostAccounts[0] as string, `k-${lostAccounts[0]}`)).rows >= 8, 30_000, 'the exporter at work');
    await victim.kill();
    await victim.restart(); // empty: no RDB, no AOF; the same node id and slots
    const backAt = Date.now();
    await cluster.waitHealthy(60_000);
    for (const a of names) await until(() => ok(traffic.results.get(a) ?? [], backAt) >= 15, 90_000, `${a}: served again after the loss`);
    await traffic.stop();
    console.log(`the lost shard held ${lostAccounts.join(', ')}, the key record of k-${names[0]}${markerLost ? ' and the generation marker' : ''}`);

    onlyRetryable(traffic.results);
    await agree(w, traffic.results);
    // The lost key record was written again: the key is known (a call answers 200, not 401).
    expect(await cluster.client.exists(record)).toBe(1);
    await close(w); // 6 redis-servers, 2 gateways and a Postgres fewer for the next test on a shared machine
  }, 300_000);

  it('a replica that lagged behind is promoted: the settles it missed are caught up from the ledger, then Redis and the ledger agree', async () => {
    const w = await world('mloss-lag');
    const { cluster, pg, fleet } = w;
    const account = names[0] as string;
    const acct = `${cluster.prefix}:{a:${account}}:acct`;
    const victim = await cluster.masterOf(acct);
    const replica = await cluster.replicaOf(victim);

    const traffic = load(w);
    for (const a of names) await until(() => ok(traffic.results.get(a) ?? []) >= 15, 60_000, `${a}: calls before the lag`);
    // The replica stops reading its master; 32 MB in the account's slot fill the sockets between them, so the settles
    // after that wait in the master's memory only.
    const pid = replica.pid() as number;
    process.kill(pid, 'SIGSTOP');
    const filler = `${cluster.prefix}:{a:${account}}:filler`;
    for (let i = 0; i < 32; i++) await cluster.client.set(`${filler}:${i}`, 'x'.repeat(1 << 20));
    const before = (await ledgerOf(pg.pool, account, `k-${account}`)).rows;
    await until(async () => (await ledgerOf(pg.pool, account, `k-${account}`)).rows >= before + 10, 60_000, 'settles the replica misses, exported');
    await victim.kill();
    process.kill(pid, 'SIGCONT');
    const direct = await import('ioredis').then((m) => new m.Redis({ port: replica.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 }));
    direct.on('error', () => {});
    try {
      await direct.connect();
      await direct.cluster('FAILOVER', 'TAKEOVER');
    } finally {
      direct.disconnect();
    }
    const promotedAt = Date.now();
    await cluster.waitHealthy(60_000);
    for (const a of names) await until(() => ok(traffic.results.get(a) ?? [], promotedAt) >= 15, 90_000, `${a}: served after the promotion`);
    await traffic.stop();

    // The lag was real: the promoted replica had missed settles the ledger holds, and a gateway caught them up.
    const caught = fleet.procs.map((p) => p.output()).join('\n');
    const m = /had missed (\d+) settles \(([\d.e-]+) USD\)/.exec(caught);
    expect(m, 'a catch-up logged').not.toBeNull();
    expect(Number(m?.[1])).toBeGreaterThan(0);
    console.log(
      `the promoted replica had missed ${m?.[1]} settles (${m?.[2]} USD) of ${account}; fillers kept: ${await cluster.client.exists(...Array.from({ length: 32 }, (_, i) => `${filler}:${i}`))} of 32`,
    );

    onlyRetryable(traffic.results);
    await agree(w, traffic.results);
    await close(w);
  }, 300_000);
});
