// Cost curve: the gateway's memory per open stream (100 to 10,000 slow streams at once) and after they end. One
// gateway process on its in-memory store; the bench's upstream sends each stream's first chunk and holds the rest
// until the bench releases them all. RSS read from /proc with every stream open (each past its first chunk), then
// two seconds after they all ended. The number of streams is bounded by the open-files limit: the gateway holds two
// sockets a stream (the client's and the upstream's).
import { execFileSync } from 'node:child_process';
import { Pool } from 'undici';
import { route } from '../helpers/manifests.ts';
import type { Proc } from './procs.ts';
import { f1, load, mb, n, pointsOf, table, type Bounds } from './scale-common.ts';
import { CHAT_PATH, gateway } from './subjects.ts';

export const STREAM_POINTS = [100, 1_000, 3_000, 10_000];
const OPEN_WITHIN_MS = 180_000;

/** The most streams the open-files limit lets the gateway hold (two sockets each, a margin for the rest). */
export function streamCap(): number {
  const limit = Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
  return Number.isFinite(limit) ? Math.floor((limit - 1000) / 2 / 1000) * 1000 : 10_000;
}

async function drain(it: AsyncIterator<unknown>): Promise<void> {
  for (;;) if ((await it.next()).done) return;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function streamsCurve(up: Proc, b: Bounds, log: (l: string) => void): Promise<string> {
  const before = load();
  const cap = streamCap();
  const long = { connectMs: 5000, firstByteMs: 120_000, idleMs: 600_000, totalMs: 600_000 };
  const s = await gateway(up, {
    name: 'gateway',
    processes: 1,
    extra: (baseUrl) => [route('bench-hold', [{ name: 'bench-hold', provider: 'openai', baseUrl, upstreamModel: 'bench-hold', timeouts: long }])],
  });
  const gw = s.procs[0] as Proc;
  const url = s.urls[0] as string;
  const body = JSON.stringify({ model: 'bench-hold', messages: [{ role: 'user', content: 'Say something.' }], max_tokens: 64, stream: true });
  const rows: string[][] = [];
  const points = pointsOf(
    STREAM_POINTS.map((x) => Math.min(x, cap)).filter((x, i, a) => a.indexOf(x) === i),
    b,
  );
  try {
    for (const count of points) {
      const idle = mb(gw);
      log(`open streams: ${n(count)}...`);
      const pool = new Pool(url, { connections: count, pipelining: 1, connectTimeout: 60_000, headersTimeout: 120_000, bodyTimeout: 600_000 });
      try {
        const t = Date.now();
        let firstChunks = 0;
        const opening = Promise.all(
          Array.from({ length: count }, async () => {
            const res = await pool.request({ path: CHAT_PATH, method: 'POST', headers: { ...s.headers, 'content-type': 'application/json' }, body });
            const it = res.body[Symbol.asyncIterator]();
            await it.next(); // the first chunk: the stream is open end to end
            firstChunks++;
            return { status: res.statusCode, it };
          }),
        );
        // Bounded: streams that never open (a cap somewhere on the way) fail the point, saying how many did.
        let timer: NodeJS.Timeout | undefined;
        const opened = await Promise.race([
          opening,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`only ${firstChunks} of ${count} streams opened within ${OPEN_WITHIN_MS / 1000} s`)), OPEN_WITHIN_MS);
          }),
        ]).finally(() => clearTimeout(timer));
        const openS = (Date.now() - t) / 1000;
        const bad = opened.filter((o) => o.status !== 200).length;
        await sleep(500);
        const open = mb(gw);
        const released = await fetch(`http://127.0.0.1:${up.port}/release`, { method: 'POST' }).then((r) => r.text());
        await Promise.all(opened.map((o) => drain(o.it)));
        await sleep(2000);
        const after = mb(gw);
        rows.push([
          n(count),
          f1(openS),
          f1(idle),
          f1(open),
          f1(((open - idle) * 1024) / count),
          f1(after),
          String(bad + (Number(released) === count ? 0 : Math.abs(count - Number(released)))),
        ]);
      } finally {
        await pool.close();
      }
    }
  } finally {
    await gw.stop();
  }
  const capped =
    cap < (STREAM_POINTS[STREAM_POINTS.length - 1] as number)
      ? [`The open-files limit here (ulimit -n) allows ${n(cap)} streams at most: the largest point is ${n(cap)}.`]
      : [];
  return table(
    'Gateway memory against open slow streams',
    before,
    ['streams open', 'all open after (s)', 'RSS before (MB)', 'RSS with all open (MB)', 'per stream (KB)', 'RSS 2 s after they ended (MB)', 'errors'],
    rows,
    capped,
  );
}
