// What every cost curve of `npm run bench -- --scale` shares: the bounds of a run (full, quick, or capped with --max),
// one point's measure (latency one call at a time, then CPU per call under a closed loop), and the table's text.
import { loadavg } from 'node:os';
import { Client, saturate, serial, stats, type Call } from './load.ts';
import { cpuSeconds, rssBytes, type Proc } from './procs.ts';

export interface Bounds {
  /** Each curve's smallest and largest point only, each very short (the smoke test). */
  quick: boolean;
  /** The largest number of keys in Redis to reach (default 1,000,000). */
  maxKeys: number;
  /** The smallest number of keys (and ApiKeys) to start from (default 0: every point; --min N). */
  minKeys?: number;
  /** The operator curve runs its operator in a memory cgroup of this many bytes (--operator-memory; none by default). */
  operatorMemoryBytes?: number;
  /** Milliseconds of each half of a point (one at a time, then saturated). */
  pointMs: number;
}

export const FULL_POINT_MS = 1500;
export const QUICK_POINT_MS = 300;

/** The points of a curve: every one, or (quick) the smallest and the largest. */
export function pointsOf(all: readonly number[], b: Bounds, cap = Infinity, floor = 0): number[] {
  // `--min N --max N` with N not on the curve: that one point alone.
  if (floor === cap && Number.isFinite(cap) && !all.includes(cap)) return [cap];
  const within = all.filter((x) => x <= cap && x >= floor);
  const last = within[within.length - 1];
  return b.quick && within.length > 1 && last !== undefined ? [within[0] as number, last] : within;
}

export interface PointCost {
  p50Ms: number;
  p99Ms: number;
  /** CPU of the measured processes per call under the closed loop, µs. */
  cpuUs: number;
  calls: number;
  errors: number;
}

/** One call at a time for `ms` (latency), then `connections` at once for `ms` (CPU per call of `procs`). */
export async function pointCost(procs: readonly Proc[], call: Call, ms: number, connections = 16): Promise<PointCost> {
  const one = new Client(call, 1);
  try {
    const first = await one.text();
    if (first.status !== 200) throw new Error(`the subject answered ${first.status}: ${first.body.slice(0, 300)}`);
    await serial(one, Math.min(300, ms)); // warm-up
    const ser = await serial(one, ms);
    const cpu0 = procs.map((p) => cpuSeconds(p.pid));
    const sat = await saturate(call, connections, ms);
    const cpu = procs.reduce((t, p, i) => t + cpuSeconds(p.pid) - (cpu0[i] as number), 0);
    const s = stats(ser.total);
    const calls = sat.latency.count;
    return { p50Ms: s.p50, p99Ms: s.p99, cpuUs: calls > 0 ? (cpu / calls) * 1e6 : 0, calls: calls + s.count, errors: ser.errors + sat.errors };
  } finally {
    await one.close();
  }
}

export const mb = (p: Proc): number => rssBytes(p.pid) / 2 ** 20;
export const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
export const n = (x: number): string => x.toLocaleString('en-US');
export const f1 = (x: number): string => x.toFixed(1);
export const f2 = (x: number): string => x.toFixed(2);

/** A markdown table under a heading that says the load average at its start and end. */
export function table(title: string, loadBefore: string, head: string[], rows: string[][], notes: string[] = []): string {
  return [
    `### ${title} (load average ${loadBefore} before, ${load()} after)`,
    '',
    ...notes.flatMap((x) => [x, '']),
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}
