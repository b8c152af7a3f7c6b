// Cost curve: a call's CPU and latency against the number of ModelRoutes (10 to 10,000). One gateway process on its
// in-memory store per point, its config holding that many routes (all to the bench's upstream); the calls go to one
// of them. The process's first probe rounds run during the point, spread over a start window of 20 ms a route (10,000
// routes: about 50 probes a second against the upstream), as they would after any start.
import { route } from '../helpers/manifests.ts';
import type { Call } from './load.ts';
import type { Proc } from './procs.ts';
import { f1, f2, load, mb, n, pointCost, pointsOf, table, type Bounds } from './scale-common.ts';
import { CHAT } from './scale-keys.ts';
import { CHAT_PATH, gateway } from './subjects.ts';

export const ROUTE_POINTS = [10, 100, 1_000, 10_000];

export async function routesCurve(up: Proc, b: Bounds, log: (l: string) => void): Promise<string> {
  const before = load();
  const rows: string[][] = [];
  for (const routes of pointsOf(ROUTE_POINTS, b)) {
    log(`ModelRoutes: ${n(routes)}, starting the gateway...`);
    const t = Date.now();
    const timeouts = { connectMs: 2000, firstByteMs: 10_000, idleMs: 10_000, totalMs: 60_000 };
    // The subject has two routes of its own (bench-chat, bench-paced).
    const extra = (baseUrl: string): object[] =>
      Array.from({ length: routes - 2 }, (_, i) =>
        route(`scale-route-${i}`, [{ name: `t${i}`, provider: 'openai', baseUrl, upstreamModel: 'bench-chat', timeouts }]),
      );
    const s = await gateway(up, { name: 'gateway', processes: 1, extra, startMs: 300_000 });
    const startS = (Date.now() - t) / 1000;
    const gw = s.procs[0] as Proc;
    try {
      log(`ModelRoutes: ${n(routes)} (started in ${startS.toFixed(1)} s), measuring...`);
      const call: Call = { urls: s.urls, path: CHAT_PATH, headers: { ...s.headers, 'content-type': 'application/json' }, body: CHAT };
      const c = await pointCost([gw], call, b.pointMs);
      rows.push([n(routes), f1(startS), f2(c.p50Ms), f2(c.p99Ms), String(Math.round(c.cpuUs)), f1(mb(gw)), String(c.errors)]);
    } finally {
      await gw.stop();
    }
  }
  return table(
    'A call against the number of ModelRoutes',
    before,
    ['ModelRoutes', 'start to listening (s)', 'p50 one at a time (ms)', 'p99 one at a time (ms)', 'gateway CPU per call (µs)', 'gateway RSS (MB)', 'errors'],
    rows,
  );
}
