// node test/bench/profile-top.ts FILE.cpuprofile [N]: what a V8 CPU profile of a gateway process (BENCH_CPU_PROF)
// says, as the tables of RESULTS.md give it: the busy time (idle left out) by package, native frames charged to
// the nearest JavaScript caller's package and socket writes, GC and V8's own work on their own lines; then the top
// self and inclusive times of our code (gateway/**), the inclusive ones without socket writes and GC.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const OWN: Record<string, string> = {
  writev: 'socket writes (syscalls)',
  writeUtf8String: 'socket writes (syscalls)',
  writeBuffer: 'socket writes (syscalls)',
  writeLatin1String: 'socket writes (syscalls)',
  '(garbage collector)': 'GC',
  '(program)': 'V8 and native (program)',
};

function packageOf(url: string): string | null {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1] as string;
  if (url.includes('/gateway/')) return 'gateway/** (ours)';
  if (url.startsWith('node:')) return 'node core';
  return null;
}

function name(n: ProfileNode): string {
  const where = /gateway\/.*$/.exec(n.callFrame.url)?.[0] ?? n.callFrame.url;
  return `${n.callFrame.functionName || '(anonymous)'} ${where}:${n.callFrame.lineNumber + 1}`;
}

const file = process.argv[2];
if (!file) throw new Error('usage: node test/bench/profile-top.ts FILE.cpuprofile [N]');
const top = Number(process.argv[3] ?? 20);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const spent = new Map<number, number>();
p.samples.forEach((s, i) => spent.set(s, (spent.get(s) ?? 0) + (p.timeDeltas[i] ?? 0)));

const add = (m: Map<string, number>, k: string, t: number): void => void m.set(k, (m.get(k) ?? 0) + t);
const packages = new Map<string, number>();
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
let busy = 0;
let cpu = 0;
for (const [id, t] of spent) {
  const n = byId.get(id) as ProfileNode;
  const fn = n.callFrame.functionName;
  total += t;
  if (fn === '(idle)') continue;
  busy += t;
  const stack: ProfileNode[] = [];
  for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) stack.push(byId.get(x) as ProfileNode);
  const pkg = OWN[fn] ?? stack.map((s) => packageOf(s.callFrame.url)).find((k) => k !== null) ?? 'other native';
  add(packages, pkg, t);
  if (n.callFrame.url.includes('/gateway/')) add(self, name(n), t);
  if (OWN[fn]) continue;
  cpu += t;
  const seen = new Set<string>();
  for (const s of stack) {
    if (!s.callFrame.url.includes('/gateway/')) continue;
    const k = name(s);
    if (!seen.has(k)) add(inclusive, k, t);
    seen.add(k);
  }
}

const pct = (v: number, of: number): string => `${((v / of) * 100).toFixed(1)}%`.padStart(6);
const sorted = (m: Map<string, number>): Array<[string, number]> => [...m].sort((a, b) => b[1] - a[1]);
console.log(`${file}: busy ${(busy / 1e6).toFixed(1)} s of ${(total / 1e6).toFixed(1)} s sampled\n`);
console.log('busy time by package');
for (const [k, v] of sorted(packages).slice(0, top)) console.log(`${pct(v, busy)}  ${k}`);
console.log('\nself time, gateway/** (share of busy)');
for (const [k, v] of sorted(self).slice(0, top)) console.log(`${pct(v, busy)}  ${k}`);
console.log('\ninclusive time, gateway/**, without socket writes, GC and program (share of that JavaScript time)');
for (const [k, v] of sorted(inclusive).slice(0, top)) console.log(`${pct(v, cpu)}  ${k}`);
