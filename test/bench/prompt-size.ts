// node test/bench/prompt-size.ts: a gateway process's CPU per call against the prompt's size (1 KB to 1 MB), for a
// chat call passed through to an OpenAI-compatible upstream and one translated to Anthropic's Messages API, on the
// bench's fake upstream (loopback only). CPU comes from /proc, so it is the gateway's alone. BENCH_COMPARE_ROOT=DIR
// measures a second checkout's gateway in the same run, call for call interleaved, so two versions are compared
// side by side on the same machine load; BENCH_CPU_PROF=DIR writes V8 CPU profiles (node --cpu-prof).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../../gateway/contract/keys.ts';
import { account, apiKey, plan, route, toYaml } from '../helpers/manifests.ts';
import { cpuSeconds, freePort, ROOT, startProc, type Proc } from './procs.ts';
import { upstream } from './subjects.ts';

/** BENCH_SIZES_KB=100,1000: only these sizes (the slopes need 1, 100 and 1000). */
const SIZES_KB = (process.env.BENCH_SIZES_KB ?? '1,10,100,300,1000').split(',').map(Number);
const PATHS = { 'passed through': 'bench-chat', 'translated to Anthropic': 'bench-claude' } as const;

function manifests(upstreamPort: number, key: string): string {
  const timeouts = { connectMs: 2000, firstByteMs: 10_000, idleMs: 10_000, totalMs: 60_000 };
  return toYaml([
    plan('bench', { tier: 1, limits: { rpm: 10_000_000, tpm: 10_000_000_000 } }),
    account('bench', 'bench', { credits: [{ id: 'bench-credit', amountUsd: 1_000_000 }] }),
    ...apiKey('bench-key', 'bench', {}, key).docs,
    route('bench-chat', [{ name: 'bench-chat', provider: 'openai', baseUrl: `http://127.0.0.1:${upstreamPort}/v1`, upstreamModel: 'bench-chat', timeouts }]),
    route('bench-claude', [
      { name: 'bench-claude', provider: 'anthropic', baseUrl: `http://127.0.0.1:${upstreamPort}`, upstreamModel: 'bench-claude', timeouts },
    ]),
  ]);
}

/** Deterministic prose of about `kb` KB: words of 2-9 letters, a sentence end now and then, some non-ASCII. */
function prose(kb: number): string {
  const words: string[] = [];
  let n = 0;
  let x = 12345;
  while (n < kb * 1024) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const len = 2 + (x % 8);
    const w = (x % 97 === 0 ? 'café' : 'abcdefghijklmnopqrstuvwxyz'.slice(x % 17, (x % 17) + len)) + (x % 13 === 0 ? '.' : '');
    words.push(w);
    n += w.length + 1;
  }
  return words.join(' ');
}

interface Gateway {
  label: string;
  proc: Proc;
  url: string;
}

async function start(label: string, root: string, up: Proc, key: string): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-prompt-'));
  writeFileSync(join(dir, 'c.yaml'), manifests(up.port, key));
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', join(process.env.BENCH_CPU_PROF, label)] : [];
  const proc = await startProc({
    name: label,
    command: process.execPath,
    args: [...prof, join(root, 'gateway/main.ts')],
    env: {
      SVC_CONFIG: join(dir, 'c.yaml'),
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      SVC_KEY_PEPPER: 'bench-pepper-not-secret',
      SVC_METRICS_PORT: String(await freePort()),
    },
    ready: /svc-gateway listening on http:\/\/127\.0\.0\.1:(\d+)/,
    timeoutMs: 120_000,
  });
  return { label, proc, url: `http://127.0.0.1:${proc.port}` };
}

async function call(g: Gateway, key: string, body: string): Promise<void> {
  const r = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${g.label}: ${r.status} ${text.slice(0, 300)}`);
}

/** The gateway's CPU per call (µs) over `n` calls one at a time (after 3 not counted). */
async function cpuPerCall(g: Gateway, key: string, body: string, n: number): Promise<number> {
  for (let i = 0; i < 3; i++) await call(g, key, body);
  const before = cpuSeconds(g.proc.pid);
  for (let i = 0; i < n; i++) await call(g, key, body);
  return ((cpuSeconds(g.proc.pid) - before) / n) * 1e6;
}

/** CPU per call of each gateway, in 3 rounds alternating between them, so both see the same machine load. */
async function alternating(gws: Gateway[], key: string, body: string, n: number): Promise<number[]> {
  const sums = gws.map(() => 0);
  for (let round = 0; round < 3; round++) {
    for (const [i, g] of gws.entries()) sums[i] = (sums[i] ?? 0) + (await cpuPerCall(g, key, body, Math.ceil(n / 3)));
  }
  return sums;
}

function slope(a: number, b: number, kbA: number, kbB: number): string {
  return ((b - a) / (kbB - kbA)).toFixed(2);
}

async function main(): Promise<void> {
  const key = generateKey();
  const up = await upstream();
  const roots: Array<[string, string]> = [['this checkout', ROOT]];
  if (process.env.BENCH_COMPARE_ROOT) roots.unshift(['compared', process.env.BENCH_COMPARE_ROOT]);
  const gws: Gateway[] = [];
  try {
    for (const [label, root] of roots) gws.push(await start(label.replace(/ /g, '-'), root, up, key));
    const rows: string[] = [];
    const perKb: Record<string, Record<string, number[]>> = {};
    for (const [path, model] of Object.entries(PATHS)) {
      for (const kb of SIZES_KB) {
        const text = prose(kb);
        const body = JSON.stringify({
          model,
          max_tokens: 64,
          messages: [
            { role: 'system', content: 'Answer briefly.' },
            { role: 'user', content: text },
          ],
        });
        const n = Math.max(15, Math.min(200, Math.round(8000 / kb)));
        const cells: string[] = [];
        const sums = await alternating(gws, key, body, n);
        for (const [i, g] of gws.entries()) {
          const us = (sums[i] ?? 0) / 3;
          ((perKb[path] ??= {})[g.label] ??= []).push(us);
          cells.push(us.toFixed(0));
        }
        rows.push(`| ${path} | ${kb} | ${Buffer.byteLength(body)} | ${cells.join(' | ')} |`);
        console.error(rows[rows.length - 1]);
      }
    }
    const heads = gws.map((g) => `CPU per call, ${g.label} (µs)`);
    console.log(`| path | prompt (KB) | body (bytes) | ${heads.join(' | ')} |\n|---|---|---|${heads.map(() => '---|').join('')}`);
    console.log(rows.join('\n'));
    console.log('\n| path | version | µs per KB, 1-100 KB | µs per KB, 100 KB-1 MB |\n|---|---|---|---|');
    for (const [path, byLabel] of Object.entries(perKb)) {
      for (const [label, us] of Object.entries(byLabel)) {
        const at = (kb: number): number => us[SIZES_KB.indexOf(kb)] ?? NaN;
        console.log(`| ${path} | ${label} | ${slope(at(1), at(100), 1, 100)} | ${slope(at(100), at(1000), 100, 1000)} |`);
      }
    }
  } finally {
    for (const g of gws) await g.proc.stop();
    await up.stop();
  }
}

if (import.meta.main) await main();
