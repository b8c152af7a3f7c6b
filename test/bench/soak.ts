// Memory soak: the gateway under a moderate, steady mix of JSON calls and streams for MINUTES; RSS from /proc
// and the V8 heap from the gateway's own /metrics (on its metrics port), sampled along the way. Flat means no growth beyond noise.
import { Client, fixedRate } from './load.ts';
import { rssBytes, type Proc } from './procs.ts';
import { CHAT_PATH, type Subject } from './subjects.ts';

export const SOAK_JSON_RATE = 400;
export const SOAK_STREAM_RATE = 50;
const SAMPLE_MS = 15_000;

interface Sample {
  atS: number;
  rssMb: number;
  heapMb: number;
  /** redis-server's RSS, when the gateway runs on Redis (the usage stream grows there, capped by MAXLEN). */
  redisMb: number;
}

async function heapUsedMb(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  return m ? Number(m[1]) / 2 ** 20 : 0;
}

/** Least-squares slope, MB per minute. */
function slope(xs: Sample[], pick: (s: Sample) => number): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((t, s) => t + s.atS, 0) / n;
  const my = xs.reduce((t, s) => t + pick(s), 0) / n;
  const num = xs.reduce((t, s) => t + (s.atS - mx) * (pick(s) - my), 0);
  const den = xs.reduce((t, s) => t + (s.atS - mx) ** 2, 0);
  return den > 0 ? (num / den) * 60 : 0;
}

export async function soak(s: Subject, minutes: number, log: (line: string) => void): Promise<string> {
  const gw = s.procs[0] as Proc;
  const redis = s.procs.find((p) => p.name === 'redis');
  const metricsUrl = s.metricsUrls?.[0];
  if (!metricsUrl) throw new Error(`soak: ${s.name} has no metrics port (only our gateway is soaked)`);
  const body = { model: 'bench-chat', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 64 };
  const headers = { ...s.headers, 'content-type': 'application/json' };
  const json = new Client({ urls: s.urls, path: CHAT_PATH, headers, body: JSON.stringify(body) }, 32);
  const stream = new Client(
    { urls: s.urls, path: CHAT_PATH, headers, body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }) },
    32,
  );
  const durationMs = minutes * 60_000;
  const samples: Sample[] = [];
  const t0 = performance.now();
  const sample = async (): Promise<void> => {
    const redisMb = redis ? rssBytes(redis.pid) / 2 ** 20 : 0;
    const x = { atS: (performance.now() - t0) / 1000, rssMb: rssBytes(gw.pid) / 2 ** 20, heapMb: await heapUsedMb(metricsUrl), redisMb };
    samples.push(x);
    log(`soak ${x.atS.toFixed(0)} s: RSS ${x.rssMb.toFixed(1)} MB, heap used ${x.heapMb.toFixed(1)} MB, Redis RSS ${x.redisMb.toFixed(1)} MB`);
  };
  await sample();
  const timer = setInterval(() => void sample(), SAMPLE_MS);
  try {
    const [j, st] = await Promise.all([fixedRate(json, SOAK_JSON_RATE, durationMs, false), fixedRate(stream, SOAK_STREAM_RATE, durationMs, false)]);
    clearInterval(timer);
    await sample();
    // The first minute is warm-up (JIT, pools, the bounded in-memory usage buffer filling): judged after it.
    const steady = samples.filter((x) => x.atS >= Math.min(60, durationMs / 2000));
    const first = steady[0] ?? (samples[0] as Sample);
    const last = samples[samples.length - 1] as Sample;
    const lines = [
      `Soak: ${minutes} min at ${SOAK_JSON_RATE} JSON calls/s + ${SOAK_STREAM_RATE} streams/s on ${s.name}; errors ${j.errors + st.errors}.`,
      '',
      '| t (s) | gateway RSS (MB) | gateway heap used (MB) | redis-server RSS (MB) |',
      '| --- | --- | --- | --- |',
      ...samples.map((x) => `| ${x.atS.toFixed(0)} | ${x.rssMb.toFixed(1)} | ${x.heapMb.toFixed(1)} | ${x.redisMb.toFixed(1)} |`),
      '',
      `From ${first.atS.toFixed(0)} s to the end: RSS ${first.rssMb.toFixed(1)} -> ${last.rssMb.toFixed(1)} MB (trend ${slope(steady, (x) => x.rssMb).toFixed(2)} MB/min), ` +
        `heap used ${first.heapMb.toFixed(1)} -> ${last.heapMb.toFixed(1)} MB (trend ${slope(steady, (x) => x.heapMb).toFixed(2)} MB/min).`,
    ];
    return lines.join('\n');
  } finally {
    clearInterval(timer);
    await Promise.all([json.close(), stream.close()]);
  }
}
