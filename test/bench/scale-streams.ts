// Cost curve: the gateway's memory per open stream (100 to 10,000 slow streams at once) and after they end. One
// gateway process on its in-memory store; the bench's upstream sends each stream's first chunk and holds the rest
// until the bench releases them all. Streams are opened in waves of WAVE (thousands of connects at once overflow the
// listen backlog: resets, not a measure of the gateway). RSS read from /proc with every stream open (each past its
// first chunk), then two seconds after they all ended. The number of streams is bounded by the open-files limit:
// the gateway holds two sockets a stream (the client's and the upstream's).
import { execFileSync } from 'node:child_process';
import { Pool } from 'undici';
import { route } from '../helpers/manifests.ts';
import type { Proc } from './procs.ts';
import { f1, load, mb, n, pointsOf, table, type Bounds } from './scale-common.ts';
import { CHAT_PATH, gateway, type Subject } from './subjects.ts';

export const STREAM_POINTS = [100, 1_000, 3_000, 10_000];
const WAVE = 250;
const QUICK_MAX = 3_000;
const OPEN_WITHIN_MS = 300_000;

/** The most streams the open-files limit lets the gateway hold (two sockets each, a margin for the rest). */
export function streamCap(): number {
  const limit = Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
  return Number.isFinite(limit) ? Math.floor((limit - 1000) / 2 / 1000) * 1000 : 10_000;
}

async function drain(it: AsyncIterator<unknown>): Promise<void> {
  for (;;) if ((await it.next()).done) return;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Opened {
  status: number;
  it: AsyncIterator<unknown>;
}

/** `count` streams open at once, then released and drained: one row of the table. */
async function onePoint(s: Subject, gw: Proc, upPort: number, count: number): Promise<string[]> {
  const body = JSON.stringify({ model: 'bench-hold', messages: [{ role: 'user', content: 'Say something.' }], max_tokens: 64, stream: true });
  const idle = mb(gw);
  const pool = new Pool(s.urls[0] as string, { connections: count, pipelining: 1, connectTimeout: 60_000, headersTimeout: 120_000, bodyTimeout: 600_000 });
  const opened: Opened[] = [];
  try {
    const t = Date.now();
    const openOne = async (): Promise<void> => {
      const res = await pool.request({ path: CHAT_PATH, method: 'POST', headers: { ...s.headers, 'content-type': 'application/json' }, body });
      const it = res.body[Symbol.asyncIterator]();
      opened.push({ status: res.statusCode, it });
      await it.next(); // the first chunk: the stream is open end to end
    };
    for (let done = 0; done < count; done += WAVE) {
      if (Date.now() - t > OPEN_WITHIN_MS) throw new Error(`only ${done} of ${count} streams opened within ${OPEN_WITHIN_MS / 1000} s`);
      await Promise.all(Array.from({ length: Math.min(WAVE, count - done) }, openOne));
    }
    const openS = (Date.now() - t) / 1000;
    await sleep(500);
    const open = mb(gw);
    const released = Number(await fetch(`http://127.0.0.1:${upPort}/release`, { method: 'POST' }).then((r) => r.text()));
    await Promise.all(opened.map((o) => drain(o.it)));
    await sleep(2000);
    const errors = opened.filter((o) => o.status !== 200).length + Math.abs(count - released);
    return [n(count), f1(openS), f1(idle), f1(open), f1(((open - idle) * 1024) / count), f1(mb(gw)), String(errors)];
  } finally {
    // A point that failed half way: whatever is still held upstream ends, so the next point starts clean.
    await fetch(`http://127.0.0.1:${upPort}/release`, { method: 'POST' }).catch(() => {});
    await pool.destroy();
  }
}

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
  const rows: string[][] = [];
  // Quick: up to 3,000 (thousands of connects take minutes on a busy machine).
  const points = pointsOf(
    STREAM_POINTS.map((x) => Math.min(x, b.quick ? QUICK_MAX : cap)).filter((x, i, a) => a.indexOf(x) === i),
    b,
  );
  let failed: Error | null = null;
  try {
    for (const count of points) {
      log(`open streams: ${n(count)}...`);
      try {
        rows.push(await onePoint(s, gw, up.port, count));
      } catch (err) {
        // The other points stay in the table; the run still fails, saying which point and why.
        failed = new Error(`open streams: the point at ${n(count)} failed: ${err instanceof Error ? err.message : String(err)}`);
        rows.push([n(count), `failed: ${failed.message}`, '', '', '', '', '']);
      }
    }
  } finally {
    await gw.stop();
  }
  const capped =
    !b.quick && cap < (STREAM_POINTS[STREAM_POINTS.length - 1] as number)
      ? [`The open-files limit here (ulimit -n) allows ${n(cap)} streams at most: the largest point is ${n(cap)}.`]
      : [];
  const text = table(
    'Gateway memory against open slow streams',
    before,
    ['streams open', 'all open after (s)', 'RSS before (MB)', 'RSS with all open (MB)', 'per stream (KB)', 'RSS 2 s after they ended (MB)', 'errors'],
    rows,
    capped,
  );
  if (failed) throw Object.assign(new Error(`${failed.message}\n\n${text}`));
  return text;
}
