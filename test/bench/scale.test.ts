// npm run bench -- --scale --quick, end to end: every cost curve's smallest and largest point runs, and each table
// comes out with those two rows and figures above zero. The figures themselves are measured, never asserted here.
// `npm run test:scale` runs it (also part of `npm run test:bench`, not of `npm test`); the operator's curve needs
// kube-apiserver and etcd as the operator tests get them (test/k8s).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from './procs.ts';

function runScale(): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['test/bench/run.ts', '--scale', '--quick', '--max', '100000'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), 590_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** The body rows of the table under the heading that starts with `heading`, as cells. */
function rowsUnder(text: string, heading: string): string[][] {
  const at = text.indexOf(`### ${heading}`);
  if (at < 0) return [];
  const lines = text.slice(at).split('\n').slice(1);
  const end = lines.findIndex((l) => l.startsWith('### '));
  return (end < 0 ? lines : lines.slice(0, end))
    .filter((l) => l.startsWith('|'))
    .slice(2)
    .map((l) =>
      l
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
}

const num = (cell: string | undefined): number => Number((cell ?? '').split(/[ (]/)[0]?.replaceAll(',', ''));

describe('npm run bench -- --scale --quick', () => {
  it("runs each curve's smallest and largest point", async () => {
    const r = await runScale();
    expect(r.code, `${r.out}\n${r.err}`).toBe(0);
    expect(r.out).toMatch(/^Machine: \d+ CPUs/m);

    const keys = rowsUnder(r.out, 'A call against the number of keys in Redis');
    expect(keys.map((row) => num(row[0]))).toEqual([10, 100_000]);
    for (const row of keys) for (const i of [1, 2, 3, 4, 5]) expect(num(row[i]), row.join(' | ')).toBeGreaterThan(0);
    expect(r.out).toContain('Stopped at 100,000 keys (--max).');

    const routes = rowsUnder(r.out, 'A call against the number of ModelRoutes');
    expect(routes.map((row) => num(row[0]))).toEqual([10, 10_000]);
    for (const row of routes) for (const i of [2, 3, 4, 5]) expect(num(row[i]), row.join(' | ')).toBeGreaterThan(0);

    const prompt = rowsUnder(r.out, 'A call against the size of its prompt');
    expect(prompt.map((row) => row[0])).toEqual(['1 KB', '1,000 KB']);
    for (const row of prompt) {
      expect(row).toHaveLength(5);
      for (const cell of row.slice(1)) expect(cell, row.join(' | ')).toMatch(/^\d+ µs \(p50 [\d.]+ ms, \d+ calls\)$/);
    }

    const streams = rowsUnder(r.out, 'Gateway memory against open slow streams');
    expect(streams.map((row) => num(row[0]))[0]).toBe(100);
    expect(streams).toHaveLength(2);
    for (const row of streams) {
      for (const i of [2, 3, 5]) expect(num(row[i]), row.join(' | ')).toBeGreaterThan(0);
      expect(row[6], 'errors').toBe('0');
    }

    const replicas = rowsUnder(r.out, 'Gateway processes on one Redis');
    expect(replicas.map((row) => `${row[0]} ${row[1]}`)).toEqual(['off 1', 'off 3', 'on 1', 'on 3']);
    for (const row of replicas) for (const i of [2, 3, 4]) expect(num(row[i]), row.join(' | ')).toBeGreaterThan(0);

    const operator = rowsUnder(r.out, 'The operator against the number of ApiKeys');
    expect(
      operator.map((row) => num(row[0])),
      r.out,
    ).toEqual([100, 1000]);
    for (const row of operator) for (const i of [2, 3, 4, 6]) expect(num(row[i]), row.join(' | ')).toBeGreaterThan(0);
  }, 600_000);
});
