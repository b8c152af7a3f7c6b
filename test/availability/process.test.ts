// The real standalone process (node gateway/main.ts) probes its own targets: /status and its JSON, a declared
// Incident from the manifests, and a call routed around a target in major_outage with the headers saying why.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { basics, route, toYaml } from '../helpers/manifests.ts';
import { metricSum, scrape } from '../helpers/prom.ts';
import { until } from '../helpers/until.ts';

let primary: FakeUpstream;
let secondary: FakeUpstream;
let gw: GatewayProcess;
let key: string;
const fast = { connectMs: 300, firstByteMs: 500, idleMs: 500, totalMs: 2000 };

beforeAll(async () => {
  [primary, secondary] = await Promise.all([startFakeUpstream('primary'), startFakeUpstream('secondary')]);
  const b = basics();
  key = b.keys.builder;
  const dir = mkdtempSync(join(tmpdir(), 'svc-avail-'));
  const file = join(dir, 'manifests.yaml');
  writeFileSync(
    file,
    toYaml([
      ...b.docs,
      route(
        'smart',
        [
          { name: 'primary', provider: 'openai', baseUrl: primary.baseUrl, weight: 1, timeouts: fast },
          { name: 'secondary', provider: 'openai', baseUrl: secondary.baseUrl, weight: 0, timeouts: fast },
        ],
        { probe: { intervalSeconds: 5 } },
      ),
      {
        apiVersion: 'gateway.svc.dev/v1alpha1',
        kind: 'Incident',
        metadata: { name: 'planned' },
        spec: {
          title: 'Planned upstream upgrade',
          models: ['smart'],
          impact: 'none',
          maintenance: { start: '2030-01-01T00:00:00Z', end: '2030-01-01T01:00:00Z' },
        },
      },
    ]),
  );
  gw = await startGatewayProcess({ SVC_CONFIG: file, SVC_SECURITY_CONTACT: 'security@example.com', LOG_LEVEL: 'warn' });
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([primary?.close(), secondary?.close()]);
});

const json = async (path: string): Promise<any> => (await fetch(`${gw.url}${path}`)).json(); // eslint-disable-line @typescript-eslint/no-explicit-any

describe('npm start probes itself', () => {
  it('serves /status, its JSON, the declared maintenance and security.txt', async () => {
    await until(async () => (await json('/status/api/v2/components.json')).components[0]?.updated_at !== undefined, 5000, 'components');
    await until(async () => primary.calls.some((c) => c.body.max_tokens === 1), 5000, 'first probe');
    expect((await fetch(`${gw.url}/status`)).status).toBe(200);
    const m = await json('/status/api/v2/scheduled-maintenances.json');
    expect(m.scheduled_maintenances.map((x: { name: string; status: string }) => [x.name, x.status])).toEqual([['Planned upstream upgrade', 'scheduled']]);
    expect(await (await fetch(`${gw.url}/.well-known/security.txt`)).text()).toContain('Contact: mailto:security@example.com');
    expect((await fetch(`${gw.url}/trust`)).status).toBe(200);
  });

  it('a target failing its probes is skipped within two intervals, and the answer says why', async () => {
    primary.fallback = (c) => (c.body.max_tokens === 1 ? { kind: 'status', status: 500 } : { kind: 'reply' });
    const state = async (): Promise<string> =>
      ((await json('/status/api/v2/components.json')) as { components: Array<{ status: string }> }).components[0]?.status ?? '';
    let h: Headers | null = null;
    await until(
      async () => {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'smart', messages: [{ role: 'user', content: 'hi' }] }),
        });
        await res.text();
        h = res.headers;
        return res.headers.get('x-svc-fallback-reason') === 'unavailable';
      },
      14_000,
      'a call routed around the major_outage target',
      500,
    );
    expect(h!.get('x-svc-upstream')).toBe('secondary');
    expect(await state()).toBe('operational'); // served while one target works
    // The gauge the chart's SvcGatewayUpstreamMajorOutage alert reads: one state per target, as the board has it.
    const text = await scrape(gw.metricsUrl);
    const state1 = (target: string, s: string): number => metricSum(text, 'svc_gateway_upstream_state', { model: 'smart', target, state: s });
    expect([
      state1('primary', 'major_outage'),
      state1('primary', 'operational'),
      state1('secondary', 'major_outage'),
      state1('secondary', 'operational'),
    ]).toEqual([1, 0, 0, 1]);
  }, 20_000);
});
