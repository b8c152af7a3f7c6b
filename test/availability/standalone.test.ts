// Availability in one process against fake upstreams that fail and recover: target and model states, incidents
// opened, updated and resolved, the Statuspage-shaped JSON validated against its schemas, the badge, the page, and
// probes billed to no account.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import { spComponents, spIncidents, spMaintenances, spStatusJson, spSummary } from '../../console/status/statuspage-schema.ts';
import { startFakeUpstream, type FakeUpstream, type RecordedCall } from '../fakes/upstream.ts';
import { basics, route } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';
import { startAvailabilityGateway, type AvailabilityGateway } from './harness.ts';

let primary: FakeUpstream;
let secondary: FakeUpstream;
let lone: FakeUpstream;
let gw: AvailabilityGateway;
let client: OpenAI;
const fast = { connectMs: 500, firstByteMs: 500, idleMs: 500, totalMs: 3000 };
const isProbe = (c: RecordedCall): boolean => c.body.max_tokens === 1 && JSON.stringify(c.body.messages).includes('ping');

beforeAll(async () => {
  [primary, secondary, lone] = await Promise.all([startFakeUpstream('primary'), startFakeUpstream('secondary'), startFakeUpstream('lone')]);
  const b = basics();
  gw = await startAvailabilityGateway([
    ...b.docs,
    route(
      'smart',
      [
        { name: 'primary', provider: 'openai', baseUrl: primary.baseUrl, weight: 1, timeouts: fast },
        { name: 'secondary', provider: 'openai', baseUrl: secondary.baseUrl, weight: 0, timeouts: fast },
      ],
      { probe: { intervalSeconds: 5 } },
    ),
    route('solo', [{ name: 'lone', provider: 'openai', baseUrl: lone.baseUrl, timeouts: fast }], { probe: { intervalSeconds: 5 } }),
    route('first-choice', [{ name: 'flaky', provider: 'openai', baseUrl: primary.baseUrl, timeouts: fast }], { fallbacks: ['solo'] }),
  ]);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([primary?.close(), secondary?.close(), lone?.close()]);
});

beforeEach(() => {
  for (const f of [primary, secondary, lone]) f.fallback = () => ({ kind: 'reply' });
});

async function getJson<T>(path: string, schema: ZodType<T>): Promise<T> {
  const res = await fetch(`${gw.url}${path}`);
  expect(res.status, path).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body: unknown = await res.json();
  const parsed = schema.safeParse(body);
  expect(parsed.success ? [] : parsed.error.issues, `${path} has the Statuspage shape`).toEqual([]);
  return parsed.data as T;
}

const stateOf = async (model: string, target: string): Promise<string | undefined> =>
  (await gw.avail.board.states()).find((s) => s.model === model && s.target === target)?.state;

describe('probes and states', () => {
  it('a failing target goes partial then major; the model stays operational while another target works', async () => {
    primary.fallback = () => ({ kind: 'status', status: 500 });
    await gw.rounds(1, 'smart');
    expect(await stateOf('smart', 'primary')).toBe('partial_outage');
    await gw.rounds(1, 'smart');
    expect(await stateOf('smart', 'primary')).toBe('major_outage');
    expect(await stateOf('smart', 'secondary')).toBe('operational');
    const components = await getJson('/status/api/v2/components.json', spComponents);
    expect(components.components.find((c) => c.name === 'smart')?.status).toBe('operational');
    primary.fallback = () => ({ kind: 'reply' });
    await gw.rounds(1, 'smart');
    expect(await stateOf('smart', 'primary')).toBe('operational');
  });

  it('a slow probe is degraded_performance; a stalled one fails with a timeout', async () => {
    lone.fallback = () => ({ kind: 'stall' });
    await gw.rounds(1, 'solo');
    const s = (await gw.avail.board.states()).find((x) => x.target === 'lone');
    expect(s?.state).toBe('partial_outage');
    expect(s?.message).toMatch(/timeout/);
    lone.fallback = () => ({ kind: 'reply' });
    await gw.rounds(2, 'solo');
  });

  it('probes are minimal real calls billed to no account', async () => {
    const before = gw.sink.events.length;
    const acme = await gw.store.view('acme', '', Date.now());
    const probes = primary.calls.filter(isProbe);
    expect(probes.length).toBeGreaterThan(0);
    expect(probes[0]?.body).toMatchObject({ max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] });
    await gw.rounds(1, 'smart');
    expect(gw.sink.events.length).toBe(before);
    expect((await gw.store.view('acme', '', Date.now())).balanceNano).toBe(acme.balanceNano);
    // The platform's cost is recorded with the probe: 11 + 7 tokens at the route's prices.
    const mine = (gw.avail.history as unknown as { probes: Array<{ target: string; costNano: number }> }).probes.filter((p) => p.target === 'primary').at(-1);
    expect(mine?.costNano).toBe(11 * 1040 + 7 * 2080);
  });
});

describe('incidents', () => {
  it('opens after two bad rounds, gets updates, resolves after two good rounds; the JSON follows', async () => {
    lone.fallback = () => ({ kind: 'status', status: 503 });
    await gw.rounds(1, 'solo');
    expect((await getJson('/status/api/v2/incidents/unresolved.json', spIncidents)).incidents).toEqual([]);
    await gw.rounds(1, 'solo');
    let unresolved = (await getJson('/status/api/v2/incidents/unresolved.json', spIncidents)).incidents;
    expect(unresolved).toHaveLength(1);
    expect(unresolved[0]).toMatchObject({ name: 'solo: a major outage', status: 'investigating', impact: 'critical' });
    const summary = await getJson('/status/api/v2/summary.json', spSummary);
    expect(summary.status).toEqual({ indicator: 'critical', description: 'Major Service Outage' });
    expect(summary.incidents).toHaveLength(1);
    expect(summary.components.find((c) => c.name === 'solo')?.status).toBe('major_outage');
    await gw.rounds(1, 'solo');
    lone.fallback = () => ({ kind: 'reply' });
    await gw.rounds(1, 'solo');
    unresolved = (await getJson('/status/api/v2/incidents/unresolved.json', spIncidents)).incidents;
    expect(unresolved[0]?.status).toBe('monitoring');
    await gw.rounds(1, 'solo');
    expect((await getJson('/status/api/v2/incidents/unresolved.json', spIncidents)).incidents).toEqual([]);
    const all = (await getJson('/status/api/v2/incidents.json', spIncidents)).incidents;
    const inc = all.find((i) => i.name === 'solo: a major outage');
    expect(inc?.status).toBe('resolved');
    expect(inc?.incident_updates.map((u) => u.status)).toEqual(['resolved', 'monitoring', 'identified', 'investigating']);
    expect(inc?.resolved_at).not.toBeNull();
    expect((await getJson('/status/api/v2/status.json', spStatusJson)).status.indicator).toBe('none');
    await getJson('/status/api/v2/scheduled-maintenances.json', spMaintenances);
  });
});

describe('routing around a major_outage', () => {
  async function call(model: string) {
    const { data, response } = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    return {
      data,
      h: Object.fromEntries(['x-svc-upstream', 'x-svc-served-model', 'x-svc-fallback', 'x-svc-fallback-reason'].map((k) => [k, response.headers.get(k)])),
    };
  }

  it('tries the other target first and says why; back to normal once the target recovers', async () => {
    primary.fallback = (c) => (isProbe(c) ? { kind: 'status', status: 500 } : { kind: 'reply' });
    await gw.rounds(2, 'smart');
    const live = primary.calls.filter((c) => !isProbe(c)).length;
    const r = await call('smart');
    expect(r.h).toEqual({ 'x-svc-upstream': 'secondary', 'x-svc-served-model': 'smart', 'x-svc-fallback': 'true', 'x-svc-fallback-reason': 'unavailable' });
    expect(primary.calls.filter((c) => !isProbe(c)).length).toBe(live);
    primary.fallback = () => ({ kind: 'reply' });
    await gw.rounds(1, 'smart');
    expect((await call('smart')).h).toEqual({
      'x-svc-upstream': 'primary',
      'x-svc-served-model': 'smart',
      'x-svc-fallback': 'false',
      'x-svc-fallback-reason': null,
    });
  });

  it("skips to the fallback model when the model's only target is down, and still tries it last", async () => {
    primary.fallback = () => ({ kind: 'status', status: 500 });
    await gw.rounds(2, 'first-choice');
    expect((await call('first-choice')).h).toEqual({
      'x-svc-upstream': 'lone',
      'x-svc-served-model': 'solo',
      'x-svc-fallback': 'true',
      'x-svc-fallback-reason': 'unavailable',
    });
    // Everything else failing too: the major_outage target is still tried, last.
    lone.fallback = () => ({ kind: 'status', status: 502 });
    primary.fallback = (c) => (isProbe(c) ? { kind: 'status', status: 500 } : { kind: 'reply' });
    const r = await call('first-choice');
    expect(r.h).toEqual({ 'x-svc-upstream': 'flaky', 'x-svc-served-model': 'first-choice', 'x-svc-fallback': 'true', 'x-svc-fallback-reason': 'unavailable' });
    primary.fallback = () => ({ kind: 'reply' });
    lone.fallback = () => ({ kind: 'reply' });
    await gw.rounds(2, 'first-choice', 'solo');
  });

  it('live traffic counts: half the calls of a target failing upstream puts it in major_outage though its probes pass', async () => {
    primary.fallback = (c) => (isProbe(c) ? { kind: 'reply' } : { kind: 'status', status: 500 });
    await gw.avail.health.flush();
    const zero = { calls: 0, failures: 0 };
    const before = await gw.avail.board.live(Date.now());
    const delta = (after: Map<string, { calls: number; failures: number }>, k: string) => {
      const a = after.get(k) ?? zero;
      const b = before.get(k) ?? zero;
      return { calls: a.calls - b.calls, failures: a.failures - b.failures };
    };
    for (let i = 0; i < 6; i++) expect((await call('smart')).h['x-svc-upstream']).toBe('secondary');
    await gw.avail.health.flush();
    const live = await gw.avail.board.live(Date.now());
    expect(delta(live, 'smart/primary')).toEqual({ calls: 6, failures: 6 });
    expect(delta(live, 'smart/secondary')).toEqual({ calls: 6, failures: 0 });
    await gw.rounds(1, 'smart');
    expect(await stateOf('smart', 'primary')).toBe('major_outage');
  });
});

describe('pages', () => {
  it("/status is public, in the console's look, under its CSP, with a row and 90 bars per model", async () => {
    const res = await fetch(`${gw.url}/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const text = await res.text();
    expect(text).toContain('/status/static/console.css');
    expect(text.match(/<script[^>]*>/g)).toEqual(['<script src="/status/static/status.js" defer>']);
    expect(text).toContain('id="auto-refresh" data-refresh="60" checked');
    for (const m of ['smart', 'solo', 'first-choice']) expect(text).toContain(`Daily uptime of ${m}, 90 days`);
    expect(text.match(/<rect class="day /g)).toHaveLength(3 * 90);
    expect(text).toContain('Uptime = 1 − (time in major outage + half the time in partial outage)');
    expect(text).toContain('Incident history');
  });

  it('a badge per model, and a 404 badge for an unknown one', async () => {
    const res = await fetch(`${gw.url}/status/badge/solo.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await res.text()).toMatch(/<svg[^>]+aria-label="solo: (operational|major outage|partial outage)"/);
    const missing = await fetch(`${gw.url}/status/badge/%3Cscript%3E.svg`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).not.toContain('<script>');
  });
});

describe('on its own timers', () => {
  it('a target that fails is in major_outage within two intervals (5 s), and back within two after it recovers', async () => {
    const timed = await startAvailabilityGateway(
      [...basics().docs, route('timed', [{ name: 'timed-t', provider: 'openai', baseUrl: lone.baseUrl, timeouts: fast }], { probe: { intervalSeconds: 5 } })],
      { start: true },
    );
    try {
      const state = async (): Promise<string | undefined> => (await timed.avail.board.states()).find((s) => s.target === 'timed-t')?.state;
      await until(async () => (await state()) === 'operational', 3000, 'first probe round');
      lone.fallback = () => ({ kind: 'status', status: 500 });
      const t0 = Date.now();
      await until(async () => (await state()) === 'major_outage', 11_000, 'major_outage within two intervals');
      const down = Date.now() - t0;
      lone.fallback = () => ({ kind: 'reply' });
      await until(async () => (await state()) === 'operational', 11_000, 'operational within two intervals');
      expect(down).toBeLessThanOrEqual(11_000);
    } finally {
      await timed.close();
    }
  }, 30_000);
});
