// Every process that serves /metrics (the gateway, the usage exporter, the operator), as a real child process: its
// scrape passes `promtool check metrics` with no error and no lint warning, and carries the standard Node.js process
// metrics under their standard names (the names the usual Node.js dashboards and alerts query), none under our prefix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream } from '../fakes/upstream.ts';
import { exporterProcess, type ExporterProcess } from '../helpers/exporter.ts';
import { FLEET_PEPPER, writeManifests } from '../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { scrape } from '../helpers/prom.ts';
import { checkMetrics } from '../helpers/promtool.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { mixedTraffic, script, trafficManifests, type Upstreams } from '../helpers/usage-traffic.ts';
import { install, startCluster, type Cluster } from '../operator/harness.ts';
import type { OperatorProcess } from '../operator/operator-process.ts';

const STANDARD = [
  'process_cpu_seconds_total',
  'process_start_time_seconds',
  'process_resident_memory_bytes',
  'process_open_fds',
  'nodejs_heap_size_used_bytes',
  'nodejs_heap_size_total_bytes',
  'nodejs_eventloop_lag_seconds',
  'nodejs_eventloop_lag_p99_seconds',
  'nodejs_active_handles',
  'nodejs_gc_duration_seconds',
  'nodejs_version_info',
];

let redis: TestRedis;
let db: TestPostgres;
let u: Upstreams;
let gw: GatewayProcess;
let exporter: ExporterProcess;
let cluster: Cluster;
let operator: OperatorProcess;
const scrapes: Record<string, string> = {};

beforeAll(async () => {
  const [primary, secondary, backup] = await Promise.all([startFakeUpstream('primary'), startFakeUpstream('secondary'), startFakeUpstream('backup')]);
  u = { primary, secondary, backup };
  script(u);
  [redis, db, cluster] = await Promise.all([startRedis('process-metrics'), startPostgres('process-metrics'), startCluster('process-metrics')]);
  const m = trafficManifests(u);
  const env = { REDIS_URL: redis.url, SVC_REDIS_PREFIX: redis.prefix, DATABASE_URL: db.url };
  // A standalone gateway with its in-process exporter (both registries' families on one port), and the exporter as
  // its own process with its own /metrics, as the chart runs it.
  gw = await startGatewayProcess({ ...env, SVC_CONFIG: writeManifests(m.docs), SVC_KEY_PEPPER: FLEET_PEPPER });
  exporter = exporterProcess(env);
  const inst = await install(cluster, 'process-metrics');
  operator = await inst.startOperator('op-0');
  // Traffic of every kind, so that every labelled family has samples (fallbacks, refusals, histograms).
  await mixedTraffic([gw.url], m.keys, 40);
  scrapes.gateway = await scrape(gw.metricsUrl);
  scrapes.exporter = await scrape(await exporter.url);
  scrapes.operator = await scrape(`http://127.0.0.1:${operator.port}`);
}, 180_000);

afterAll(async () => {
  await Promise.allSettled([gw?.stop(), exporter?.kill(), operator?.kill('SIGKILL')]);
  await Promise.allSettled([redis?.stop(), db?.stop(), cluster?.stop(), u?.primary.close(), u?.secondary.close(), u?.backup.close()]);
});

const families = (text: string): string[] => [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => x[1] as string);

describe.each(['gateway', 'exporter', 'operator'])('/metrics of the %s process', (name) => {
  it('passes promtool check metrics with no warning', async () => {
    const text = scrapes[name] as string;
    expect(families(text).length).toBeGreaterThan(STANDARD.length);
    const r = await checkMetrics(text);
    expect(r.output.trim(), `promtool check metrics on the ${name}'s scrape`).toBe('');
    expect(r.code).toBe(0);
  });

  it('exports the standard Node.js process metrics under their standard names, none under our prefix', () => {
    const names = families(scrapes[name] as string);
    for (const s of STANDARD) expect(names, s).toContain(s);
    expect(names.filter((n) => /^svc_\w+_process_/.test(n))).toEqual([]);
    // Own metrics are still there, prefixed by the component.
    expect(names.some((n) => n.startsWith(name === 'operator' ? 'svc_operator_' : name === 'exporter' ? 'svc_exporter_' : 'svc_gateway_'))).toBe(true);
  });
});

it("the gateway's scrape has samples of its own families after traffic", () => {
  const text = scrapes.gateway as string;
  for (const f of ['svc_gateway_requests_total', 'svc_gateway_fallbacks_total', 'svc_gateway_request_duration_seconds_bucket'])
    expect(text).toMatch(new RegExp(`^${f}\\{`, 'm'));
});
