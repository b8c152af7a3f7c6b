// npm run bench in quick mode, end to end: every process starts, every scenario runs, the table comes out
// well formed with figures above zero. Speed is measured by the bench, never asserted here.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './procs.ts';

const SUBJECTS = ['direct', 'floor', 'gateway-redis', 'portkey'];

function runBench(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['test/bench/run.ts', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), 110_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** The rows of the markdown table under `heading`: cells by column name. */
function tableUnder(text: string, heading: string): Array<Record<string, string>> {
  const rows = text
    .slice(text.indexOf(heading))
    .split('\n')
    .filter((l) => l.startsWith('|'));
  const cells = (l: string): string[] =>
    l
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
  const head = cells(rows[0] ?? '');
  const body: string[][] = [];
  for (const l of rows.slice(2)) {
    const c = cells(l);
    if (c.length !== head.length) break; // the next table
    body.push(c);
  }
  return body.map((c) => Object.fromEntries(head.map((h, i) => [h, c[i] ?? ''])));
}

const num = (cell: string | undefined): number => Number((cell ?? '').split(/[ /(]/)[0]?.replaceAll(',', ''));

describe('npm run bench -- --quick', () => {
  it('prints the comparison table with a row per subject and figures above zero', async () => {
    const json = join(mkdtempSync(join(tmpdir(), 'svc-bench-test-')), 'bench.json');
    const r = await runBench(['--quick', '--subjects', SUBJECTS.join(','), '--json', json]);
    expect(r.code, `${r.out}\n${r.err}`).toBe(0);
    expect(r.out).toMatch(/^Machine: \d+ CPUs/m);

    const plain = tableUnder(r.out, '### Non-streaming');
    expect(plain.map((row) => row.subject)).toEqual(SUBJECTS);
    for (const row of plain) {
      const fig = (prefix: string): number => num(Object.entries(row).find(([k]) => k.startsWith(prefix))?.[1]);
      expect(fig('req/s (saturated'), row.subject).toBeGreaterThan(0);
      expect(fig('p50 one at a time'), row.subject).toBeGreaterThan(0);
      expect(fig('p50 / p99 at'), row.subject).toBeGreaterThan(0);
      expect(fig('CPU per request'), row.subject).toBeGreaterThan(0);
      expect(fig('RSS'), row.subject).toBeGreaterThan(0);
    }

    const streams = tableUnder(r.out, '### Streaming');
    expect(streams.map((row) => row.subject)).toEqual(SUBJECTS);
    for (const row of streams) {
      const fig = (prefix: string): number => num(Object.entries(row).find(([k]) => k.startsWith(prefix))?.[1]);
      expect(fig('streams/s (saturated'), row.subject).toBeGreaterThan(0);
      expect(fig('TTFB p50 one at a time'), row.subject).toBeGreaterThan(0);
      expect(fig('CPU per stream'), row.subject).toBeGreaterThan(0);
    }

    expect(r.out).toContain('| gateway-redis / floor |');
    expect(r.out).toContain('| gateway-redis / portkey |');
    const raw = JSON.parse(readFileSync(json, 'utf8')) as { results: Array<{ name: string; json: { sat: { rps: number } } }> };
    expect(raw.results.map((x) => x.name)).toEqual(SUBJECTS);
    for (const x of raw.results) expect(x.json.sat.rps, x.name).toBeGreaterThan(0);
  }, 120_000);

  it('measures each endpoint beside chat (gateway-endpoints): a row per endpoint, figures above zero, no errors', async () => {
    const r = await runBench(['--quick', '--subjects', 'gateway-endpoints']);
    expect(r.code, `${r.out}\n${r.err}`).toBe(0);
    const rows = tableUnder(r.out, '### Endpoints beside chat');
    expect(rows.map((row) => row.endpoint)).toEqual(['chat completions', 'completions', 'completions (stream)', 'rerank', 'moderations']);
    for (const row of rows) {
      expect(num(row['req/s (saturated, 32 conns)']), row.endpoint).toBeGreaterThan(0);
      expect(num(row['gateway CPU per call (µs)']), row.endpoint).toBeGreaterThan(0);
      expect(num(row['p50 direct (ms)']), row.endpoint).toBeGreaterThan(0);
      expect(row.errors, row.endpoint).toBe('0');
    }
  }, 120_000);

  it('measures admission at the store (--leases): pairs, a flush beside many leases, a refusal beside a full window', async () => {
    const r = await runBench(['--leases', '--quick']);
    expect(r.code, `${r.out}\n${r.err}`).toBe(0);
    const pairs = tableUnder(r.out, '| store |');
    expect(pairs.map((row) => row.store)).toEqual(['per call', 'leases', 'per call', 'leases']);
    for (const row of pairs) expect(num(row['Redis commands per pair']), row.store).toBeGreaterThan(0);
    const live = tableUnder(r.out, 'A flush while the account holds many leases');
    expect(live.map((row) => num(row['leases live in the account']))).toEqual([1, 300]);
    const refusals = tableUnder(r.out, 'A refusal at the TPM cap');
    expect(refusals.map((row) => num(row["calls in the key's window"]))).toEqual([100, 5000]);
    for (const row of refusals) expect(num(row['wall time per refusal (ms)'])).toBeGreaterThan(0);
  }, 120_000);
});
