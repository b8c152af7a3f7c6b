// Three standalone gateway processes on one Redis make one set of probes, not three: only the holder of the prober
// lease probes, each route once per interval, on the rhythm the others keep too; when the holder stops, another
// process carries on at once, still once per interval. A fake upstream notes when each probe arrives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProbe, startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startFleet, type Fleet } from '../helpers/fleet.ts';
import { basics, route } from '../helpers/manifests.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

const ROUTES = 4;
const INTERVAL_S = 5;

let upstream: FakeUpstream;
let redis: TestRedis;
let fleet: Fleet;
/** Arrival times (ms) of the probes, per upstream model. */
const probes = new Map<string, number[]>();

beforeAll(async () => {
  upstream = await startFakeUpstream('probe-once');
  upstream.fallback = (call) => {
    if (isProbe(call)) {
      const model = String(call.body.model);
      probes.set(model, [...(probes.get(model) ?? []), Date.now()]);
    }
    return { kind: 'reply' };
  };
  redis = await startRedis('probe-once');
  const timeouts = { connectMs: 1000, firstByteMs: 2000, idleMs: 2000, totalMs: 4000 };
  const docs = [
    ...basics().docs,
    ...Array.from({ length: ROUTES }, (_, i) =>
      route(`r${i}`, [{ name: `t${i}`, provider: 'openai', baseUrl: upstream.baseUrl, upstreamModel: `up-${i}`, timeouts }], {
        probe: { intervalSeconds: INTERVAL_S },
      }),
    ),
  ];
  fleet = await startFleet(3, redis, docs);
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
  await redis?.stop();
  await upstream?.close();
});

/**
 * Every gap between two probes of one route after its first (the first round comes soon after start, the others at
 * the route's place in its interval).
 */
function gaps(): number[] {
  return [...probes.values()].flatMap((t) => t.slice(2).map((x, i) => x - (t[i + 1] as number)));
}

describe('probes on three processes sharing a Redis', () => {
  it('each route is probed once per interval, by one process, and on when that process stops', async () => {
    // Three processes, about three intervals: one probe per route per interval (three times as many without the lease).
    await until(() => probes.size === ROUTES && [...probes.values()].every((t) => t.length >= 4), 30_000, 'every route probed four times');
    expect(Math.min(...gaps())).toBeGreaterThan(INTERVAL_S * 1000 - 1000);
    expect(Math.max(...gaps())).toBeLessThan(INTERVAL_S * 1000 + 1000);

    // Stop two processes (the holder among them or not): the last one probes from then on, on the same rhythm.
    const before = new Map([...probes].map(([m, t]) => [m, t.length]));
    await Promise.all(fleet.procs.slice(0, 2).map((p) => p.stop()));
    await until(() => [...probes].every(([m, t]) => t.length >= (before.get(m) as number) + 2), 30_000, 'probes go on after two processes stopped');
    // Never two in one interval; a handover may skip a route's round that fell in it (a second at most), no more.
    expect(Math.min(...gaps())).toBeGreaterThan(INTERVAL_S * 1000 - 1000);
    expect(Math.max(...gaps())).toBeLessThan(2 * INTERVAL_S * 1000 + 1000);
  }, 90_000);
});
