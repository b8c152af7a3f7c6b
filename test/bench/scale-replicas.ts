// Cost curve: three gateway processes on one Redis against one, leased admission off and on (SVC_ADMISSION_LEASES=1):
// the total calls per second under a closed loop spread over the processes, and redis-server's CPU per call (what
// makes Redis the bottleneck, or not, as processes are added). Each process, and redis-server, is its own process.
import type { Call } from './load.ts';
import { saturate } from './load.ts';
import { cpuSeconds, type Proc } from './procs.ts';
import { load, pointsOf, table, type Bounds } from './scale-common.ts';
import { CHAT } from './scale-keys.ts';
import { CHAT_PATH, gateway, redis } from './subjects.ts';

export const REPLICA_POINTS = [1, 3];

export async function replicasCurve(up: Proc, b: Bounds, log: (l: string) => void): Promise<string> {
  const before = load();
  const rows: string[][] = [];
  for (const leases of [false, true]) {
    for (const processes of pointsOf(REPLICA_POINTS, b)) {
      log(`${processes} gateway process(es) on one Redis, leases ${leases ? 'on' : 'off'}...`);
      const r = await redis();
      const s = await gateway(up, { name: 'gateway-redis', processes, redis: r, env: leases ? { SVC_ADMISSION_LEASES: '1' } : {} });
      try {
        const call: Call = { urls: s.urls, path: CHAT_PATH, headers: { ...s.headers, 'content-type': 'application/json' }, body: CHAT };
        await saturate(call, 48, Math.min(500, b.pointMs)); // warm-up
        const cpu0 = s.procs.map((p) => cpuSeconds(p.pid));
        const sat = await saturate(call, 48, 2 * b.pointMs);
        const used = s.procs.map((p, i) => cpuSeconds(p.pid) - (cpu0[i] as number));
        const redisCpu = used[s.procs.indexOf(r)] ?? 0;
        const gwCpu = used.reduce((t, x) => t + x, 0) - redisCpu;
        const per = (x: number): string => String(Math.round((x / Math.max(1, sat.latency.count)) * 1e6));
        rows.push([leases ? 'on' : 'off', String(processes), String(Math.round(sat.rps)), per(gwCpu), per(redisCpu), String(sat.errors)]);
      } finally {
        await Promise.all(s.procs.map((p) => p.stop()));
      }
    }
  }
  return table(
    'Gateway processes on one Redis',
    before,
    [
      'leases',
      'gateway processes',
      'calls/s (all processes, 48 connections)',
      'gateway CPU per call (µs, all processes)',
      'redis-server CPU per call (µs)',
      'errors',
    ],
    rows,
    [
      'Every process on this one machine: with two CPUs, three processes share the same cores as one, so the total throughput shows what Redis and the processes cost together, not what three machines would serve.',
    ],
  );
}
