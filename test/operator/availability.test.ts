// Availability in a cluster, on the real API server: two operators, one set of probes (the leader's); each
// ModelRoute's status gets targets[] and an Available condition, and `kubectl get modelroutes` shows the state; an
// Incident applied with kubectl reaches /status through Redis, as the console process reads it.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountClusterStatus } from '../../console/status/cluster.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { account, plan, route, toYaml } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { gatewayReady, install, startCluster, type Cluster, type Installation } from './harness.ts';
import { secretKey, waitFor } from './kube-api.ts';

let cluster: Cluster;
let inst: Installation;
let up: FakeUpstream;
let db: TestPostgres;
const fast = { connectMs: 300, firstByteMs: 500, idleMs: 500, totalMs: 2000 };

interface RouteStatus {
  targets?: Array<{ name: string; state: string; lastProbeTime?: string; latencyMs?: number; message?: string }>;
  conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
}

const routeStatus = async (name: string): Promise<RouteStatus> =>
  JSON.parse((await inst.kubectlOk(['get', 'modelroute', name, '-o', 'jsonpath={.status}'])) || '{}') as RouteStatus;

beforeAll(async () => {
  [cluster, up, db] = await Promise.all([startCluster('availability'), startFakeUpstream('up'), startPostgres('operator_availability')]);
  inst = await install(cluster, 'availability');
  await inst.kubectlOk(
    ['apply', '-f', '-'],
    toYaml([
      plan('builder', { tier: 2 }),
      account('acme', 'builder', { credits: [{ id: 'c1', amountUsd: 10 }] }),
      { apiVersion: 'gateway.svc.dev/v1alpha1', kind: 'ApiKey', metadata: { name: 'caller' }, spec: { accountRef: 'acme' } },
      route(
        'probed',
        [
          // `gone` is the first choice by weight; once in major_outage it is tried last.
          { name: 'good', provider: 'openai', baseUrl: up.baseUrl, weight: 0, timeouts: fast },
          { name: 'gone', provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', weight: 1, timeouts: fast },
        ],
        { probe: { intervalSeconds: 5 } },
      ),
    ]),
  );
  // With DATABASE_URL the leader keeps the probes and incidents in Postgres as well.
  await Promise.all([inst.startOperator('op-a', { DATABASE_URL: db.url }), inst.startOperator('op-b', { DATABASE_URL: db.url })]);
}, 120_000);

afterAll(async () => {
  await inst?.stop();
  await cluster?.stop();
  await up?.close();
  await db?.stop();
});

describe('operator probes', () => {
  it('ModelRoute status: targets[] with state, probe time, latency and message; Available; a State column', async () => {
    const s = await waitFor(
      'both targets judged, the dead one in major_outage',
      async () => {
        const st = await routeStatus('probed');
        return st.targets?.find((t) => t.name === 'gone')?.state === 'major_outage' ? st : undefined;
      },
      30_000,
      200,
    );
    const good = s.targets?.find((t) => t.name === 'good');
    expect(good).toMatchObject({ state: 'operational' });
    expect(good?.lastProbeTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(typeof good?.latencyMs).toBe('number');
    expect(s.targets?.find((t) => t.name === 'gone')?.message).toMatch(/gone: (connect error|timeout)/);
    const available = s.conditions?.find((c) => c.type === 'Available');
    expect(available).toMatchObject({ status: 'True', reason: 'Operational' });
    expect(available?.message).toContain('1 of 2 targets serving');
    expect(s.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const table = await inst.kubectlOk(['get', 'modelroutes']);
    expect(table.split('\n')[0]).toMatch(/READY\s+STATE\s+AGE/);
    expect(table.split('\n')[1]).toMatch(/True\s+Operational\s+/);
  }, 40_000);

  it('only the leader probes: two operators, one set of probes', async () => {
    const probed = inst.operators.map((o) => o.logs().filter((l) => l.msg === 'Probed ModelRoute targets' && l.model === 'probed').length);
    expect(probed.filter((n) => n > 0)).toHaveLength(1);
    const rounds = Math.max(...probed);
    // Each round is one probe of `good`; a second prober would double the calls the upstream saw.
    const probes = up.calls.filter((c) => c.body.max_tokens === 1).length;
    expect(probes).toBeGreaterThanOrEqual(rounds);
    expect(probes).toBeLessThanOrEqual(rounds + 1); // a round in flight while the logs were read
    // The same single set in Postgres: one row per target per round.
    const { rows } = await db.pool.query<{ target: string; n: string }>(
      "SELECT target, count(*) AS n FROM probe_results WHERE model = 'probed' GROUP BY target ORDER BY target",
    );
    expect(rows.map((r) => r.target)).toEqual(['gone', 'good']);
    for (const r of rows) expect(Number(r.n)).toBeGreaterThanOrEqual(rounds - 1);
    for (const r of rows) expect(Number(r.n)).toBeLessThanOrEqual(rounds + 1);
  });
});

describe('cluster-mode gateways', () => {
  it('read the states from Redis: a call skips the target in major_outage and says why; its outcome is counted', async () => {
    const gw = await inst.startGateway();
    await gatewayReady(gw);
    const key = await waitFor('caller key', () => secretKey(cluster.api, inst.ns, 'caller-key'), 20_000);
    const call = async (): Promise<Response> =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'probed', messages: [{ role: 'user', content: 'hi' }] }),
      });
    const res = await waitFor(
      'a call routed around gone',
      async () => {
        const r = await call();
        await r.text();
        return r.status === 200 && r.headers.get('x-svc-fallback-reason') === 'unavailable' ? r : undefined;
      },
      10_000,
      200,
    );
    expect(res.headers.get('x-svc-upstream')).toBe('good');
    expect(res.headers.get('x-svc-fallback')).toBe('true');
    const redis = cluster.redis.client;
    {
      const counted = await waitFor(
        'live counts on the board',
        async () => {
          const minute = Math.floor(Date.now() / 60_000);
          const all = {
            ...(await redis.hgetall(`${inst.prefix}:{avail}:live:${minute - 1}`)),
            ...(await redis.hgetall(`${inst.prefix}:{avail}:live:${minute}`)),
          };
          return Number(all['probed/good|c'] ?? 0) > 0 ? all : undefined;
        },
        10_000,
        250,
      );
      expect(counted['probed/gone|c']).toBeUndefined(); // never tried while another target answered
    }
  }, 40_000);
});

describe('declared incidents', () => {
  it("an Incident applied with kubectl shows on the console process's /status (read from Redis)", async () => {
    const redis = cluster.redis.client;
    const app = Fastify();
    const status = await mountClusterStatus(app, { redis, prefix: inst.prefix, env: {} });
    try {
      await inst.kubectlOk(
        ['apply', '-f', '-'],
        toYaml([
          {
            apiVersion: 'gateway.svc.dev/v1alpha1',
            kind: 'Incident',
            metadata: { name: 'eu-latency' },
            spec: {
              title: 'Slow answers from the EU region',
              models: ['probed'],
              impact: 'minor',
              status: 'identified',
              state: 'degraded_performance',
              updates: [
                { time: '2026-01-10T09:00:00Z', status: 'investigating', message: 'Looking into slow answers.' },
                { time: '2026-01-10T09:20:00Z', status: 'identified', message: 'The EU upstream is overloaded.' },
              ],
            },
          },
        ]),
      );
      const inc = await waitFor(
        'the Incident on /status',
        async () => {
          const body = JSON.parse((await app.inject({ url: '/status/api/v2/incidents/unresolved.json' })).body) as {
            incidents: Array<{ name: string; status: string; impact: string; incident_updates: unknown[] }>;
          };
          return body.incidents.find((i) => i.name === 'Slow answers from the EU region');
        },
        15_000,
        200,
      );
      expect(inc).toMatchObject({ status: 'identified', impact: 'minor' });
      expect(inc.incident_updates).toHaveLength(2);
      const summary = JSON.parse((await app.inject({ url: '/status/api/v2/summary.json' })).body) as { components: Array<{ name: string; status: string }> };
      // The person's word wins over the probes while the incident is open.
      expect(summary.components.find((c) => c.name === 'probed')?.status).toBe('degraded_performance');
      const html = (await app.inject({ url: '/status' })).body;
      expect(html).toContain('Slow answers from the EU region');
      expect(html).toContain('The EU upstream is overloaded.');
    } finally {
      status.close();
      await app.close();
    }
  }, 30_000);
});
