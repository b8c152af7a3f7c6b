// The usage pipeline on a Redis Cluster: 3 standalone gateway processes with SVC_REDIS_CLUSTER=1, each also running
// the usage exporter (3 consumer-group replicas over per-account streams in different slots), mixed traffic on fake
// upstreams. Every call is one row (missing 0, duplicated 0); costs equal the settled ledger; the exporter command
// (`npm run exporter`) reads the same Cluster.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisStore } from '../../gateway/state/redis-store.ts';
import { startFakeUpstream } from '../fakes/upstream.ts';
import { exporterProcess, rowCounts, waitFor } from '../helpers/exporter.ts';
import { countBy, fleetStore, startFleet, type Fleet } from '../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-cluster.ts';
import { mixedTraffic, script, servedTokens, trafficManifests, type Upstreams } from '../helpers/usage-traffic.ts';

let cluster: TestRedisCluster;
let pg: TestPostgres;
let u: Upstreams;
let fleet: Fleet;
let store: RedisStore;

beforeAll(async () => {
  const [primary, secondary, backup] = await Promise.all([startFakeUpstream('primary'), startFakeUpstream('secondary'), startFakeUpstream('backup')]);
  u = { primary, secondary, backup };
  script(u);
  [cluster, pg] = await Promise.all([startRedisCluster('cpipe'), startPostgres('cpipe', { own: true })]);
}, 120_000);

afterAll(async () => {
  await store?.close();
  await fleet?.stop();
  await Promise.all([cluster?.stop(), pg?.stop(), u?.primary.close(), u?.secondary.close(), u?.backup.close()]);
});

describe('usage pipeline on a Redis Cluster', () => {
  it('writes exactly one row per call from streams in several slots; costs equal the ledger', async () => {
    const redis = { url: cluster.url, prefix: cluster.prefix, cluster: true };
    const m = trafficManifests(u);
    fleet = await startFleet(3, redis, m.docs, { DATABASE_URL: pg.url });
    store = await fleetStore(redis);
    const streams = await cluster.client.smembers(`${cluster.prefix}:usage:streams`);
    expect(new Set(await Promise.all(streams.map(async (s) => (await cluster.masterOf(s)).port))).size).toBeGreaterThan(1);
    const outcomes = await mixedTraffic(fleet.urls, m.keys, 240);
    for (const a of ['acme', 'globex']) await waitFor(async () => (await store.ledger(a)).openHolds === 0, 20_000, `holds of ${a} settled`);
    await waitFor(async () => (await rowCounts(pg.pool)).rows >= outcomes.length, 60_000, `${outcomes.length} rows exported`);
    await new Promise((r) => setTimeout(r, 500));
    const { rows, distinct } = await rowCounts(pg.pool);
    console.log(
      `Cluster pipeline: ${outcomes.length} calls ${JSON.stringify(countBy(outcomes, (o) => o.status))}; rows ${rows}; missing ${outcomes.length - distinct}; duplicated ${rows - distinct}`,
    );
    expect(rows).toBe(outcomes.length);
    expect(distinct).toBe(rows);
    const tokens = await pg.pool.query<{ input: string; output: string }>(
      'SELECT sum(input_tokens) AS input, sum(output_tokens) AS output FROM usage_events WHERE status = 200',
    );
    expect({ input: Number(tokens.rows[0]?.input), output: Number(tokens.rows[0]?.output) }).toEqual(servedTokens(u));
    for (const a of ['acme', 'globex']) {
      const ledger = await store.ledger(a);
      const raw = await pg.pool.query('SELECT sum(cost_nano)::bigint AS spent FROM usage_events WHERE account = $1', [a]);
      expect(raw.rows[0]?.spent).toBe(String(ledger.spentNano));
    }
    // The credits the exporters synced from the Cluster (one command per key, across slots).
    await waitFor(async () => ((await pg.pool.query('SELECT 1 FROM ledger_credits')).rowCount ?? 0) > 0, 20_000, 'credits synced');
  });

  it('the exporter command reads the Cluster with SVC_REDIS_CLUSTER=1', async () => {
    await fleet.stop();
    const before = (await rowCounts(pg.pool)).rows;
    await store.record({
      eventId: randomUUID(),
      createdAt: new Date().toISOString(),
      account: 'globex',
      apiKey: 'b1',
      taskType: null,
      endpoint: 'embeddings',
      requestedModel: 'm',
      servedModel: null,
      upstream: null,
      fallback: false,
      fallbackReason: null,
      status: 402,
      errorCode: 'insufficient_balance',
      stream: false,
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costNano: 0,
      feeNano: 0,
      latencyMs: 1,
      ttftMs: null,
    });
    const exp = exporterProcess({ REDIS_URL: cluster.url, SVC_REDIS_CLUSTER: '1', DATABASE_URL: pg.url, SVC_REDIS_PREFIX: cluster.prefix, PORT: '0' }, [
      '--poll-ms',
      '20',
    ]);
    try {
      await exp.url;
      await waitFor(async () => (await rowCounts(pg.pool)).rows === before + 1, 20_000, 'the recorded event exported');
    } catch (err) {
      const dead = await pg.pool.query('SELECT reason, detail FROM usage_dead_letters');
      throw new Error(`${String(err)}\n${exp.output()}\ndead letters: ${JSON.stringify(dead.rows)}`, { cause: err });
    } finally {
      await exp.kill();
    }
  });
});
