// node test/bench/key-memory.ts [KEYS...]: a gateway process's memory against the number of ApiKeys in its config, as
// `npm start` runs it (one YAML file of manifests) in memory and on a throwaway redis-server (loopback only). Prints
// RSS after start and after a few calls with one key, so the per-key cost shows as the slope between rows. A third
// row per count: cluster mode (`npm run gateway`), the keys written to Redis beforehand as the operator does.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publishSnapshot } from '../../gateway/contract/config-channel.ts';
import { generateKey } from '../../gateway/contract/keys.ts';
import { loadStandaloneConfig } from '../../gateway/config/standalone.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { account, apiKey, plan, route, toYaml } from '../helpers/manifests.ts';
import { freePort, rssBytes, startProc, type Proc } from './procs.ts';
import { redis, upstream } from './subjects.ts';

export function keyConfig(keys: number, upstreamPort: number): { yaml: string; key: string } {
  const docs: object[] = [plan('p', { tier: 1, limits: { rpm: 1_000_000, tpm: 1_000_000_000 } })];
  let first = '';
  for (let a = 0; a * 100 < keys; a++) docs.push(account(`acct${a}`, 'p', { credits: [{ id: 'c', amountUsd: 1000 }] }));
  for (let i = 0; i < keys; i++) {
    const k = apiKey(`key${i}`, `acct${Math.floor(i / 100)}`, { monthlyBudgetUsd: i % 3 === 0 ? 10 : undefined }, generateKey());
    if (i === 0) first = k.key;
    docs.push(...k.docs);
  }
  docs.push(route('chat', [{ name: 'chat', provider: 'openai', baseUrl: `http://127.0.0.1:${upstreamPort}/v1`, upstreamModel: 'chat' }]));
  return { yaml: toYaml(docs), key: first };
}

const PEPPER = 'bench-pepper-not-secret';

type Where = 'memory' | 'Redis' | 'cluster';
/** BENCH_KEYS_WHERE=Redis,cluster: only these rows. */
const WHERE = (process.env.BENCH_KEYS_WHERE ?? 'memory,Redis,cluster').split(',') as Where[];

async function measure(keys: number, up: Proc, where: Where, redisPort: number): Promise<string> {
  const c = keyConfig(keys, up.port);
  const dir = mkdtempSync(join(tmpdir(), 'svc-keymem-'));
  writeFileSync(join(dir, 'c.yaml'), c.yaml);
  const prefix = `km-${where}-${keys}`;
  if (where === 'cluster') {
    // What the operator does: the keys and accounts written to Redis, then the snapshot published.
    const compiled = loadStandaloneConfig(join(dir, 'c.yaml'), PEPPER);
    const store = await RedisStore.connect({ url: `redis://127.0.0.1:${redisPort}`, prefix, commandTimeoutMs: 60_000 });
    try {
      await store.applyConfig(compiled.snapshot, compiled.keys);
      await publishSnapshot(store.redis, prefix, compiled.snapshot);
    } finally {
      await store.close();
    }
  }
  const env: Record<string, string> = {
    SVC_CONFIG: join(dir, 'c.yaml'),
    PORT: '0',
    HOST: '127.0.0.1',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    SVC_KEY_PEPPER: PEPPER,
    SVC_METRICS_PORT: String(await freePort()),
    ...(where === 'memory' ? {} : { REDIS_URL: `redis://127.0.0.1:${redisPort}`, SVC_REDIS_PREFIX: prefix }),
  };
  const t = performance.now();
  const gw = await startProc({
    name: 'gw',
    command: process.execPath,
    args: ['gateway/main.ts', ...(where === 'cluster' ? ['--cluster'] : [])],
    env,
    ready: /svc-gateway listening on http:\/\/127\.0\.0\.1:(\d+)/,
    timeoutMs: 300_000,
  });
  const startS = (performance.now() - t) / 1000;
  try {
    const atStart = rssBytes(gw.pid) / 2 ** 20;
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`http://127.0.0.1:${gw.port}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      if (r.status !== 200) throw new Error(`call answered ${r.status}: ${await r.text()}`);
    }
    await new Promise((r) => setTimeout(r, 2000));
    const after = rssBytes(gw.pid) / 2 ** 20;
    return `| ${where} | ${keys} | ${startS.toFixed(1)} | ${atStart.toFixed(0)} | ${after.toFixed(0)} |`;
  } finally {
    await gw.stop();
  }
}

async function main(): Promise<void> {
  const counts = process.argv.slice(2).map(Number);
  const up = await upstream();
  const r = await redis();
  try {
    console.log('| store | keys | start (s) | RSS at start (MB) | RSS after 20 calls (MB) |\n|---|---|---|---|---|');
    for (const n of counts.length > 0 ? counts : [10, 50_000]) {
      for (const where of WHERE) console.log(await measure(n, up, where, r.port));
    }
  } finally {
    await r.stop();
    await up.stop();
  }
}

if (import.meta.main) await main();
