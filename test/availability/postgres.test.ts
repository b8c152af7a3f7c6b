// The history in Postgres (probe_results, incidents, incident_updates) answers as the one in memory does, for the
// same rounds and the same incident; probe_results keeps one row per probe with its cost; a real Postgres.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHistory, type Round } from '../../gateway/availability/history.ts';
import { newTrack, step } from '../../gateway/availability/incidents.ts';
import { PostgresHistory } from '../../gateway/availability/postgres-history.ts';
import type { State } from '../../gateway/availability/types.ts';
import { DAY_MS } from '../../gateway/availability/uptime.ts';
import { migrate } from '../../gateway/usage/postgres/migrate.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { basics, route, toYaml } from '../helpers/manifests.ts';
import { startGatewayProcess } from '../helpers/process.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { until } from '../helpers/until.ts';

let db: TestPostgres;

beforeAll(async () => {
  db = await startPostgres('availability');
  await migrate(db.pool);
}, 60_000);

afterAll(async () => {
  await db?.stop();
});

const T0 = Date.UTC(2026, 2, 1);
const MIN = 60_000;

function rounds(model: string, states: State[]): Round[] {
  return states.map((state, i) => ({
    model,
    at: T0 + i * MIN,
    intervalMs: MIN,
    state,
    probes: [
      {
        model,
        target: 'a',
        at: T0 + i * MIN,
        ok: state === 'operational',
        latencyMs: 120,
        status: state === 'operational' ? 200 : 503,
        message: 'a',
        costNano: 1234,
      },
      { model, target: 'b', at: T0 + i * MIN, ok: true, latencyMs: 80, status: 200, message: 'b', costNano: 1000 },
    ],
  }));
}

describe('PostgresHistory', () => {
  it('segments, incidents and updates equal the in-memory history for the same rounds', async () => {
    const pg = new PostgresHistory(db.pool);
    const mem = new MemoryHistory();
    const states: State[] = [
      'operational',
      'operational',
      'major_outage',
      'major_outage',
      'major_outage',
      'operational',
      'operational',
      'degraded_performance',
    ];
    const track = newTrack();
    let n = 0;
    for (const r of rounds('m1', states)) {
      await pg.addRound(r);
      await mem.addRound(r);
      const change = step(track, { model: 'm1', state: r.state, detail: 'a: HTTP 503', at: r.at }, () => `inc-${++n}`);
      if (change) {
        await pg.saveIncident(change.incident);
        await mem.saveIncident(change.incident);
      }
    }
    expect(await pg.segments('m1', T0 - DAY_MS)).toEqual(await mem.segments('m1', T0 - DAY_MS));
    expect(await pg.segments('m1', T0 - DAY_MS)).toEqual([
      { from: T0, to: T0 + 2 * MIN, state: 'operational' },
      { from: T0 + 2 * MIN, to: T0 + 5 * MIN, state: 'major_outage' },
      { from: T0 + 5 * MIN, to: T0 + 7 * MIN, state: 'operational' },
      { from: T0 + 7 * MIN, to: T0 + 8 * MIN, state: 'degraded_performance' },
    ]);
    const fromPg = await pg.incidents(T0 - DAY_MS);
    expect(fromPg).toEqual(await mem.incidents(T0 - DAY_MS));
    expect(fromPg[0]?.updates.map((u) => u.status)).toEqual(['investigating', 'identified', 'monitoring', 'resolved']);
    const { rows } = await db.pool.query<{ n: string; cost: string }>("SELECT count(*) AS n, sum(cost_nano) AS cost FROM probe_results WHERE model = 'm1'");
    expect(rows[0]).toEqual({ n: String(2 * states.length), cost: String(states.length * 2234) });
  });

  it('trims probe_results older than 90 days', async () => {
    const pg = new PostgresHistory(db.pool);
    const [old] = rounds('m2', ['operational']);
    await pg.addRound({ ...old!, at: T0 - 100 * DAY_MS });
    await pg.addRound({ ...old!, at: T0 });
    const { rows } = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM probe_results WHERE model = 'm2'");
    expect(rows[0]?.n).toBe('2');
  });
});

describe('npm start with DATABASE_URL', () => {
  it('keeps its probes in probe_results (cost recorded, billed to no account) and serves /status from them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-avail-pg-'));
    const file = join(dir, 'manifests.yaml');
    writeFileSync(file, toYaml([...basics().docs, route('mocked', [{ name: 'local-mock', provider: 'mock' }], { probe: { intervalSeconds: 5 } })]));
    const gw = await startGatewayProcess({ SVC_CONFIG: file, DATABASE_URL: db.url, LOG_LEVEL: 'warn' });
    try {
      await until(async () => (await db.pool.query("SELECT 1 FROM probe_results WHERE model = 'mocked'")).rowCount! > 0, 10_000, 'a probe row');
      const { rows } = await db.pool.query<{ ok: boolean; model_state: string; cost_nano: string }>(
        "SELECT ok, model_state, cost_nano FROM probe_results WHERE model = 'mocked' LIMIT 1",
      );
      expect(rows[0]).toMatchObject({ ok: true, model_state: 'operational' });
      expect(Number(rows[0]?.cost_nano)).toBeGreaterThan(0);
      const usage = await db.pool.query("SELECT 1 FROM usage_events WHERE requested_model = 'mocked'").catch(() => ({ rowCount: 0 }));
      expect(usage.rowCount).toBe(0);
      const summary = (await (await fetch(`${gw.url}/status/api/v2/summary.json`)).json()) as { components: Array<{ name: string; status: string }> };
      expect(summary.components.find((c) => c.name === 'mocked')?.status).toBe('operational');
    } finally {
      await gw.stop();
    }
  }, 30_000);
});
