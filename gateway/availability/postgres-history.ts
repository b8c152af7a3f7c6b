// The history in Postgres (DATABASE_URL): probe_results (one row per probe, trimmed to 90 days), incidents and
// incident_updates (gateway/usage/postgres/migrations/007_availability.sql). Segments for the bars are rebuilt from
// one row per round (DISTINCT ON the round's time), merged as in memory.
import type pg from 'pg';
import { migrate } from '../usage/postgres/migrate.ts';
import { createPool } from '../usage/postgres/pool.ts';
import type { History, Round } from './history.ts';
import type { Impact, Incident, IncidentStep, State } from './types.ts';
import { appendSegment, DAY_MS, type Segment } from './uptime.ts';

const KEEP_MS = 90 * DAY_MS;
const TRIM_EVERY_MS = 3_600_000;

export class PostgresHistory implements History {
  private readonly pool: pg.Pool;
  private readonly owned: boolean;
  private lastTrim = 0;

  constructor(pool: pg.Pool, owned = false) {
    this.pool = pool;
    this.owned = owned;
  }

  /** A history on its own small pool, the schema migrated first (under the migrations' advisory lock). */
  static async open(url: string): Promise<PostgresHistory> {
    const pool = createPool(url, { max: 2, statementTimeoutMs: 10_000 });
    pool.on('error', () => {});
    try {
      await migrate(pool);
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
    return new PostgresHistory(pool, true);
  }

  async addRound(r: Round): Promise<void> {
    if (r.probes.length === 0) return;
    const values: unknown[] = [];
    const rows = r.probes.map((p, i) => {
      values.push(r.model, p.target, new Date(r.at), p.ok, Math.round(p.latencyMs), p.status, p.message, p.costNano, r.state, r.intervalMs);
      const b = i * 10;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, $${b + 8}, $${b + 9}, $${b + 10})`;
    });
    await this.pool.query(
      `INSERT INTO probe_results (model, target, at, ok, latency_ms, status, message, cost_nano, model_state, interval_ms)
      VALUES ${rows.join(', ')} ON CONFLICT DO NOTHING`,
      values,
    );
    if (r.at - this.lastTrim > TRIM_EVERY_MS) {
      this.lastTrim = r.at;
      await this.pool.query('DELETE FROM probe_results WHERE at < $1', [new Date(r.at - KEEP_MS)]);
    }
  }

  async segments(model: string, since: number): Promise<Segment[]> {
    const { rows } = await this.pool.query<{ at: Date; model_state: State; interval_ms: number }>(
      `SELECT DISTINCT ON (at) at, model_state, interval_ms FROM probe_results WHERE model = $1 AND at >= $2 ORDER BY at`,
      [model, new Date(since - DAY_MS)],
    );
    const out: Segment[] = [];
    for (const r of rows) appendSegment(out, { from: r.at.getTime(), to: r.at.getTime() + r.interval_ms, state: r.model_state });
    return out.filter((s) => s.to > since);
  }

  async saveIncident(i: Incident): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO incidents (id, title, source, models, impact, status, created_at, updated_at, resolved_at, scheduled_from, scheduled_to)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
        ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, models = EXCLUDED.models, impact = EXCLUDED.impact, status = EXCLUDED.status,
          updated_at = EXCLUDED.updated_at, resolved_at = EXCLUDED.resolved_at, scheduled_from = EXCLUDED.scheduled_from, scheduled_to = EXCLUDED.scheduled_to`,
        [
          i.id,
          i.title,
          i.source,
          i.models,
          i.impact,
          i.status,
          new Date(i.createdAt),
          new Date(i.updatedAt),
          i.resolvedAt === null ? null : new Date(i.resolvedAt),
          i.scheduled ? new Date(i.scheduled.from) : null,
          i.scheduled ? new Date(i.scheduled.to) : null,
        ],
      );
      for (const [n, u] of i.updates.entries()) {
        await client.query('INSERT INTO incident_updates (incident_id, seq, at, status, message) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING', [
          i.id,
          n + 1,
          new Date(u.at),
          u.status,
          u.message,
        ]);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async incidents(since: number): Promise<Incident[]> {
    const { rows } = await this.pool.query<{
      id: string;
      title: string;
      source: 'probe' | 'declared';
      models: string[];
      impact: Impact;
      status: IncidentStep;
      created_at: Date;
      updated_at: Date;
      resolved_at: Date | null;
      scheduled_from: Date | null;
      scheduled_to: Date | null;
      updates: Array<{ at: string; status: IncidentStep; message: string }> | null;
    }>(
      `SELECT i.*, (SELECT json_agg(json_build_object('at', u.at, 'status', u.status, 'message', u.message) ORDER BY u.seq)
          FROM incident_updates u WHERE u.incident_id = i.id) AS updates
        FROM incidents i WHERE i.resolved_at IS NULL OR i.updated_at >= $1 ORDER BY i.created_at DESC`,
      [new Date(since)],
    );
    return rows.map((r) => ({
      id: r.id,
      title: r.title,
      source: r.source,
      models: r.models,
      impact: r.impact,
      status: r.status,
      createdAt: r.created_at.getTime(),
      updatedAt: r.updated_at.getTime(),
      resolvedAt: r.resolved_at?.getTime() ?? null,
      scheduled: r.scheduled_from && r.scheduled_to ? { from: r.scheduled_from.getTime(), to: r.scheduled_to.getTime() } : null,
      updates: (r.updates ?? []).map((u) => ({ at: Date.parse(u.at), status: u.status, message: u.message })),
    }));
  }

  async close(): Promise<void> {
    if (this.owned) await this.pool.end().catch(() => {});
  }
}
