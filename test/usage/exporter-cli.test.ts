// The exporter's command line as the operator's deployment runs it: --help, clear refusals, --migrate-only, HTTP.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exporterProcess } from '../helpers/exporter.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { ROOT } from '../helpers/process.ts';
import { metricSum } from '../helpers/prom.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

let db: TestPostgres;
let redis: TestRedis;

beforeAll(async () => {
  [db, redis] = await Promise.all([startPostgres('exporter_cli'), startRedis('exporter-cli')]);
});

afterAll(async () => {
  await Promise.all([db?.stop(), redis?.stop()]);
});

function run(args: string[], env: Record<string, string | undefined>): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, ['gateway/usage/exporter/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: undefined, DATABASE_URL: undefined, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

describe('svc-usage-exporter command', () => {
  it('prints its help', () => {
    const r = run(['--help'], {});
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage:');
    expect(r.out).toContain('REDIS_URL');
    expect(r.out).toContain('--claim-idle-ms');
  });

  it('refuses to start without its URLs, saying which', () => {
    const r = run([], {});
    expect(r.code).toBe(1);
    expect(r.out).toContain('REDIS_URL and DATABASE_URL must both be set');
  });

  it('names an unreachable Postgres without its password', () => {
    const r = run([], { REDIS_URL: redis.url, DATABASE_URL: 'postgres://svc:hunter2@127.0.0.1:9/usage' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('Cannot start the usage exporter');
    expect(r.out).not.toContain('hunter2');
  });

  it('migrates only, when asked, and then says the schema is up to date', () => {
    expect(run(['--migrate-only'], { DATABASE_URL: db.url }).out).toContain('Applied migrations: 001_usage_events');
    expect(run(['--migrate-only'], { DATABASE_URL: db.url }).out).toContain('Schema is up to date.');
  });

  it('serves /metrics, /healthz and /readyz, and stops cleanly on SIGTERM', async () => {
    const e = exporterProcess({ REDIS_URL: redis.url, DATABASE_URL: db.url, SVC_REDIS_PREFIX: redis.prefix });
    const url = await e.url;
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metricSum(metrics, 'svc_exporter_rows_written_total')).toBe(0);
    expect(metrics).toContain('svc_exporter_dead_letters_total{reason="invalid_json"} 0');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const exit = new Promise<number | null>((r) => e.child.once('exit', (code) => r(code)));
    e.child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });
});
