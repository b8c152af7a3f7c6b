// One subject through every scenario: warm-up, one call at a time, a fixed 1,000 req/s, saturation (JSON and
// SSE), and a paced stream to see chunks go through as they arrive. CPU and RSS come from /proc.
import { Pool } from 'undici';
import { Client, fixedRate, saturate, serial, stats, type Call, type Saturation, type Stats } from './load.ts';
import { cpuSeconds, rssBytes } from './procs.ts';
import { CHAT_PATH, type Subject } from './subjects.ts';

export interface Durations {
  warmMs: number;
  serialMs: number;
  fixedMs: number;
  satMs: number;
  pacedStreams: number;
}

export const FULL: Durations = { warmMs: 3000, serialMs: 3000, fixedMs: 5000, satMs: 8000, pacedStreams: 5 };
export const QUICK: Durations = { warmMs: 200, serialMs: 300, fixedMs: 500, satMs: 600, pacedStreams: 1 };
export const FIXED_RATE = 1000;
export const CONNECTIONS = 32;
export const PACE_MS = 10;

export interface Loaded {
  sat: Saturation;
  /** CPU time of the subject's processes per completed call, microseconds (Redis included)... */
  cpuUs: number;
  /** ...of which redis-server's. */
  redisCpuUs: number;
  rssMb: number;
}

export interface SubjectResult {
  name: string;
  servers: number;
  json: Loaded & { serial: Stats; fixed: Stats; fixedErrors: number };
  stream: Loaded & { ttfb: Stats; total: Stats; pacedGaps: number; pacedChunks: number };
  errors: number;
}

const CHAT = JSON.stringify({ model: 'bench-chat', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 64 });
const streamBody = (model: string): string =>
  JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Say something short.' }],
    max_tokens: 64,
    stream: true,
    stream_options: { include_usage: true },
  });

function call(s: Subject, body: string): Call {
  return { urls: s.urls, path: CHAT_PATH, headers: { ...s.headers, 'content-type': 'application/json' }, body };
}

/** Fails loudly when a subject does not answer as the bench expects (a misrouted peer would measure errors). */
async function check(c: Client, stream: boolean, name: string): Promise<void> {
  const r = await c.text();
  const ok = r.status === 200 && (stream ? r.body.trimEnd().endsWith('data: [DONE]') && r.body.includes('"usage":{') : r.body.includes('"choices"'));
  if (!ok) throw new Error(`${name} answered ${r.status} to the bench's ${stream ? 'stream' : 'call'}: ${r.body.slice(0, 500)}`);
}

async function loaded(s: Subject, c: Call, ms: number): Promise<Loaded> {
  const cpu0 = s.procs.map((p) => cpuSeconds(p.pid));
  const sat = await saturate(c, CONNECTIONS, ms);
  const used = s.procs.map((p, i) => cpuSeconds(p.pid) - (cpu0[i] as number));
  const cpu = used.reduce((t, x) => t + x, 0);
  const redisCpu = used.reduce((t, x, i) => t + (s.procs[i]?.name === 'redis' ? x : 0), 0);
  const rss = s.procs.reduce((t, p) => t + rssBytes(p.pid), 0);
  const done = sat.latency.count;
  const perCall = (x: number): number => (done > 0 ? (x / done) * 1e6 : 0);
  return { sat, cpuUs: perCall(cpu), redisCpuUs: perCall(redisCpu), rssMb: rss / 2 ** 20 };
}

/** Arrival gaps of a paced stream's body chunks: how many came at least half a pace after the previous one. */
async function paced(s: Subject, streams: number): Promise<{ gaps: number; chunks: number }> {
  const c = call(s, streamBody('bench-paced'));
  const pool = new Pool(s.urls[0] as string, { connections: 1 });
  let gaps = 0;
  let chunks = 0;
  try {
    for (let i = 0; i < streams; i++) {
      const res = await pool.request({ path: c.path, method: 'POST', headers: c.headers, body: c.body });
      const times: number[] = [];
      for await (const _chunk of res.body) times.push(performance.now());
      for (let k = 1; k < times.length; k++) {
        chunks++;
        if ((times[k] as number) - (times[k - 1] as number) >= PACE_MS / 2) gaps++;
      }
    }
  } finally {
    await pool.close();
  }
  return { gaps, chunks };
}

export async function measure(s: Subject, d: Durations): Promise<SubjectResult> {
  const jsonCall = call(s, CHAT);
  const streamCall = call(s, streamBody('bench-chat'));
  const one = new Client(jsonCall, 1);
  const many = new Client(jsonCall, 64);
  const oneStream = new Client(streamCall, 1);
  try {
    await check(one, false, s.name);
    await check(oneStream, true, s.name);
    await saturate(jsonCall, CONNECTIONS, d.warmMs);
    await saturate(streamCall, CONNECTIONS, d.warmMs);
    const ser = await serial(one, d.serialMs);
    await fixedRate(many, FIXED_RATE, Math.min(1000, d.fixedMs / 2), false); // opens the pool's connections
    const fixed = await fixedRate(many, FIXED_RATE, d.fixedMs);
    const json = await loaded(s, jsonCall, d.satMs);
    const serStream = await serial(oneStream, d.serialMs);
    const stream = await loaded(s, streamCall, d.satMs);
    const p = await paced(s, d.pacedStreams);
    return {
      name: s.name,
      servers: s.servers,
      json: { ...json, serial: stats(ser.total), fixed: stats(fixed.total), fixedErrors: fixed.errors },
      stream: { ...stream, ttfb: stats(serStream.first), total: stats(serStream.total), pacedGaps: p.gaps, pacedChunks: p.chunks },
      errors: ser.errors + fixed.errors + json.sat.errors + serStream.errors + stream.sat.errors,
    };
  } finally {
    await Promise.all([one.close(), many.close(), oneStream.close()]);
  }
}
