// npm run bench -- --guardrails: the hot-path cost of the local guardrail detectors. Two gateway processes of this
// checkout on the bench's fake upstream (loopback only): one without a Guardrail, one with every local detector on
// the request stage (secrets with high entropy, email, phone, card, iban, ip, national-id, a regex and a word list;
// action log, so every call passes and goes upstream). The same chat call, prompts of 1 to 100 KB of prose with an
// email and a card in it, alternating between the two so both see the same machine load; the gateway's CPU per call
// from /proc, and the added µs per KB of prompt (the slope of the difference).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../../gateway/contract/keys.ts';
import { account, apiKey, plan, route, toYaml } from '../helpers/manifests.ts';
import { cpuSeconds, freePort, startProc, type Proc } from './procs.ts';
import { upstream } from './subjects.ts';

const GUARDRAIL = {
  apiVersion: 'gateway.svc.dev/v1alpha1',
  kind: 'Guardrail',
  metadata: { name: 'bench-all-detectors' },
  spec: {
    stages: ['request'],
    checks: [
      { detector: 'secrets', action: 'log', highEntropy: true },
      { detector: 'email', action: 'log' },
      { detector: 'phone', action: 'log' },
      { detector: 'card', action: 'log' },
      { detector: 'iban', action: 'log' },
      { detector: 'ip', action: 'log' },
      { detector: 'national-id', action: 'log' },
      { detector: 'regex', action: 'log', patterns: [{ name: 'ticket', pattern: 'TICKET-\\d{6}' }] },
      { detector: 'words', action: 'log', words: ['project falcon', 'blue harbor'] },
    ],
  },
};

function manifests(upstreamPort: number, key: string, guarded: boolean): string {
  const timeouts = { connectMs: 2000, firstByteMs: 10_000, idleMs: 10_000, totalMs: 60_000 };
  return toYaml([
    plan('bench', { tier: 1, limits: { rpm: 10_000_000, tpm: 10_000_000_000 } }),
    account('bench', 'bench', { credits: [{ id: 'bench-credit', amountUsd: 1_000_000 }] }),
    ...apiKey('bench-key', 'bench', {}, key).docs,
    route('bench-chat', [{ name: 'bench-chat', provider: 'openai', baseUrl: `http://127.0.0.1:${upstreamPort}/v1`, upstreamModel: 'bench-chat', timeouts }]),
    ...(guarded ? [GUARDRAIL] : []),
  ]);
}

/** Deterministic prose of about `kb` KB with numbers, an email and a card-like number now and then. */
export function guardProse(kb: number): string {
  const words: string[] = [];
  let n = 0;
  let x = 12345;
  while (n < kb * 1024) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const len = 2 + (x % 8);
    let w = 'abcdefghijklmnopqrstuvwxyz'.slice(x % 17, (x % 17) + len);
    if (x % 211 === 0) w = `order ${x % 1_000_000}`;
    if (x % 1999 === 0) w = `mail jane${x % 100}@example.com`;
    if (x % 2999 === 0) w = 'card 4111 1111 1111 1111';
    words.push(w + (x % 13 === 0 ? '.' : ''));
    n += w.length + 1;
  }
  return words.join(' ');
}

interface Gateway {
  label: string;
  proc: Proc;
  url: string;
}

async function start(label: string, up: Proc, key: string, guarded: boolean): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-guard-bench-'));
  writeFileSync(join(dir, 'c.yaml'), manifests(up.port, key, guarded));
  const proc = await startProc({
    name: label,
    command: process.execPath,
    args: ['gateway/main.ts'],
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

async function cpuPerCall(g: Gateway, key: string, body: string, n: number): Promise<number> {
  for (let i = 0; i < 3; i++) await call(g, key, body);
  const before = cpuSeconds(g.proc.pid);
  for (let i = 0; i < n; i++) await call(g, key, body);
  return ((cpuSeconds(g.proc.pid) - before) / n) * 1e6;
}

/** The table of CPU per call with and without the guardrail by prompt size, and the added µs per KB. */
export async function guardrailCost(quick: boolean, log: (l: string) => void): Promise<string> {
  const sizes = quick ? [1, 10] : [1, 10, 30, 100];
  const rounds = 3;
  const key = generateKey();
  const up = await upstream();
  const gws: Gateway[] = [];
  try {
    gws.push(await start('without', up, key, false), await start('with', up, key, true));
    const rows: string[] = [];
    const added: number[] = [];
    for (const kb of sizes) {
      const body = JSON.stringify({
        model: 'bench-chat',
        max_tokens: 64,
        messages: [
          { role: 'system', content: 'Answer briefly.' },
          { role: 'user', content: guardProse(kb) },
        ],
      });
      const n = quick ? 5 : Math.max(15, Math.min(150, Math.round(3000 / kb)));
      const sums = [0, 0];
      for (let r = 0; r < rounds; r++) for (const [i, g] of gws.entries()) sums[i]! += await cpuPerCall(g, key, body, Math.ceil(n / rounds));
      const [without, withG] = sums.map((s) => s / rounds) as [number, number];
      added.push(withG - without);
      rows.push(`| ${kb} | ${without.toFixed(0)} | ${withG.toFixed(0)} | ${(withG - without).toFixed(0)} | ${((withG - without) / kb).toFixed(1)} |`);
      log(rows.at(-1)!);
    }
    const last = sizes.length - 1;
    const slope = ((added[last]! - added[0]!) / (sizes[last]! - sizes[0]!)).toFixed(1);
    return [
      'Guardrails: gateway CPU per chat call, without a Guardrail and with every local detector on the request stage (action log)',
      '',
      '| prompt (KB) | CPU per call, without (µs) | with (µs) | added (µs) | added per KB (µs) |',
      '|---|---|---|---|---|',
      ...rows,
      '',
      `Added CPU per KB of prompt, ${sizes[0]} to ${sizes[last]} KB (slope): ${slope} µs`,
    ].join('\n');
  } finally {
    for (const g of gws) await g.proc.stop();
    await up.stop();
  }
}
