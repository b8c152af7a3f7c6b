// Load generators. Latency is measured here with sub-millisecond resolution (performance.now), from the moment
// a request is handed to the client to its last byte (and, for streams, to its first body byte):
// - serial: one request at a time, closed loop (what a call adds, with nothing else going on);
// - fixedRate: open loop at a set rate, scheduled on the clock whatever the answers do;
// - saturate: autocannon's closed loop over many connections (its own histogram rounds to whole
//   milliseconds, so latencies come from its per-response event instead).
import autocannon from 'autocannon';
import { Pool } from 'undici';

export interface Call {
  /** Every URL gets the same share of the load (several gateway processes). */
  urls: string[];
  path: string;
  headers: Record<string, string>;
  /** A JSON body, or bytes (a multipart upload). */
  body: string | Buffer;
}

export interface Samples {
  /** Wall time to the last byte, ms. */
  total: number[];
  /** Wall time to the first body byte, ms. */
  first: number[];
  errors: number;
  elapsedMs: number;
}

export interface Stats {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function stats(xs: readonly number[]): Stats {
  if (xs.length === 0) return { count: 0, p50: 0, p90: 0, p99: 0, max: 0 };
  const s = Float64Array.from(xs).sort();
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
  return { count: s.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: s[s.length - 1] as number };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A keep-alive client per URL; close() when done. */
export class Client {
  private readonly pools: Pool[];
  private next = 0;
  readonly call: Call;

  constructor(call: Call, connections: number) {
    this.call = call;
    this.pools = call.urls.map((u) => new Pool(u, { connections, pipelining: 1, keepAliveTimeout: 30_000 }));
  }

  /** One call: resolves to [first-byte ms, total ms], or null when it failed. */
  async once(): Promise<[number, number] | null> {
    const pool = this.pools[this.next++ % this.pools.length] as Pool;
    const t0 = performance.now();
    try {
      const res = await pool.request({ path: this.call.path, method: 'POST', headers: this.call.headers, body: this.call.body });
      let first = -1;
      for await (const _chunk of res.body) if (first < 0) first = performance.now() - t0;
      return res.statusCode === 200 ? [first, performance.now() - t0] : null;
    } catch {
      return null;
    }
  }

  /** The first answer's body, to check each subject answers what the bench expects before measuring it. */
  async text(): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
    const res = await (this.pools[0] as Pool).request({ path: this.call.path, method: 'POST', headers: this.call.headers, body: this.call.body });
    return { status: res.statusCode, body: await res.body.text(), headers: res.headers };
  }

  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.close()));
  }
}

function record(s: Samples, r: [number, number] | null): void {
  if (!r) {
    s.errors++;
    return;
  }
  s.first.push(r[0]);
  s.total.push(r[1]);
}

/** One request at a time for durationMs (at most maxCount). */
export async function serial(c: Client, durationMs: number, maxCount = 50_000): Promise<Samples> {
  const s: Samples = { total: [], first: [], errors: 0, elapsedMs: 0 };
  const t0 = performance.now();
  while (performance.now() - t0 < durationMs && s.total.length + s.errors < maxCount) record(s, await c.once());
  s.elapsedMs = performance.now() - t0;
  return s;
}

/** Open loop: `rate` requests per second, each sent when due, whether earlier ones have answered or not. */
export async function fixedRate(c: Client, rate: number, durationMs: number, keep = true): Promise<Samples> {
  const s: Samples = { total: [], first: [], errors: 0, elapsedMs: 0 };
  const interval = 1000 / rate;
  const inflight = new Set<Promise<void>>();
  const t0 = performance.now();
  let sent = 0;
  for (;;) {
    const now = performance.now() - t0;
    if (now >= durationMs) break;
    const due = Math.floor(now / interval) + 1;
    while (sent < due) {
      sent++;
      const p: Promise<void> = c.once().then((r) => {
        if (keep) record(s, r);
        else if (!r) s.errors++;
        inflight.delete(p);
      });
      inflight.add(p);
    }
    await sleep(Math.max(0, sent * interval - (performance.now() - t0)));
  }
  await Promise.all(inflight);
  s.elapsedMs = performance.now() - t0;
  if (!keep) s.total.length = 0;
  return s;
}

export interface Saturation {
  rps: number;
  latency: Stats;
  errors: number;
  requests: number;
}

/** Closed loop over `connections` connections for durationMs: throughput and latency at saturation. */
export function saturate(call: Call, connections: number, durationMs: number): Promise<Saturation> {
  return new Promise((resolve, reject) => {
    const lat: number[] = [];
    const inst = autocannon(
      {
        url: call.urls.map((u) => u + call.path),
        connections: connections - (connections % call.urls.length),
        duration: durationMs / 1000,
        method: 'POST',
        headers: call.headers,
        body: call.body,
        timeout: 30,
      },
      (err, r) => {
        if (err) return reject(err);
        const ok = lat.length;
        resolve({ rps: ok / r.duration, latency: stats(lat), errors: r.errors + r.timeouts + r.non2xx, requests: r.requests.total });
      },
    );
    inst.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status === 200) lat.push(ms);
    });
  });
}
