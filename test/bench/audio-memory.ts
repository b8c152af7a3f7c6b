// The gateway's memory while many audio uploads are in flight: N clients (100 by default) each upload a 25 MB WAV to
// POST /v1/audio/transcriptions at once; the upstream (a loopback fake) reads every upload and holds its answer until
// all N have reached it, so the gateway holds every upload at the same time. The gateway runs in its own process and
// is measured from outside (/proc: RSS, and its peak VmHWM). The clients stream one shared buffer, so the figure is
// the gateway's alone. Uploads above SVC_UPLOAD_SPOOL_ABOVE_BYTES wait on disk (gateway/uploads/spool.ts); `--memory`
// keeps every upload in memory instead (the threshold raised past 25 MB), the figure before spooling.
// Run: node test/bench/audio-memory.ts [N] [--memory]
import { request, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { basics, route, toYaml } from '../helpers/manifests.ts';
import { rssBytes, startProc, stopAll } from './procs.ts';

const N = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 100);
const IN_MEMORY = process.argv.includes('--memory');
const FILE_BYTES = 25_000_000;
const MB = 1024 * 1024;

async function spoolFiles(parent: string): Promise<number> {
  const entries = await readdir(parent, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).length;
}

function peakBytes(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

async function main(): Promise<void> {
  let arrived = 0;
  let release = (): void => {};
  const gate = new Promise<void>((r) => (release = r));
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrived++;
      void gate.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"ok","usage":{"type":"duration","seconds":1}}'));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const dir = await mkdtemp(join(tmpdir(), 'svc-audio-mem-'));
  const b = basics();
  const config = join(dir, 'config.yaml');
  await writeFile(
    config,
    toYaml([
      ...b.docs,
      route('bench-whisper', [{ name: 'fake', provider: 'openai', baseUrl: upstreamUrl, timeouts: { totalMs: 600_000, firstByteMs: 600_000 } }], {
        type: 'transcription',
        pricing: { inputPerMTokUsd: 0, perMinuteUsd: 0 },
      }),
    ]),
  );
  const gw = await startProc({
    name: 'gateway',
    command: process.execPath,
    args: ['gateway/main.ts', '--config', config],
    // 2.5 GB through one loopback on a shared machine takes longer than the default 60 s a request may take.
    env: {
      PORT: '0',
      SVC_METRICS_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SVC_REQUEST_TIMEOUT_MS: '900000',
      SVC_UPLOAD_SPOOL_DIR: join(dir, 'spool'),
      ...(IN_MEMORY ? { SVC_UPLOAD_SPOOL_ABOVE_BYTES: String(2 * FILE_BYTES) } : {}),
    },
    ready: /svc-gateway listening on http:\/\/127\.0\.0\.1:(\d+)/,
    timeoutMs: 90_000,
  });
  try {
    // One 25 MB WAV (8 kHz, 8-bit, mono: its header says exactly what it holds), shared by every client.
    const wav = Buffer.alloc(FILE_BYTES, 128);
    wav.write('RIFF', 0, 'latin1');
    wav.writeUInt32LE(FILE_BYTES - 8, 4);
    wav.write('WAVEfmt ', 8, 'latin1');
    wav.writeUInt32LE(16, 16);
    wav.writeUInt16LE(1, 20);
    wav.writeUInt16LE(1, 22);
    wav.writeUInt32LE(8000, 24);
    wav.writeUInt32LE(8000, 28);
    wav.writeUInt16LE(1, 32);
    wav.writeUInt16LE(8, 34);
    wav.write('data', 36, 'latin1');
    wav.writeUInt32LE(FILE_BYTES - 44, 40);
    const boundary = 'bench-boundary-0123456789';
    const head = Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="model"\r\n\r\nbench-whisper\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.wav"\r\ncontent-type: audio/wav\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const before = rssBytes(gw.pid);
    const upload = (): Promise<number> =>
      new Promise((resolve) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: gw.port,
            method: 'POST',
            path: '/v1/audio/transcriptions',
            headers: {
              authorization: `Bearer ${b.keys.builder}`,
              'content-type': `multipart/form-data; boundary=${boundary}`,
              'content-length': head.length + wav.length + tail.length,
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        // A refused or cut upload counts as status 0 (reported), not a crash of the bench.
        req.on('error', () => resolve(0));
        req.write(head);
        req.write(wav);
        req.end(tail);
      });
    const started = Date.now();
    const all = Promise.all(Array.from({ length: N }, upload));
    let peakSampled = 0;
    while (arrived < N && Date.now() - started < 600_000) {
      peakSampled = Math.max(peakSampled, rssBytes(gw.pid));
      await new Promise((r) => setTimeout(r, 100));
    }
    const inFlight = rssBytes(gw.pid);
    const hwm = peakBytes(gw.pid);
    const spooled = await spoolFiles(join(dir, 'spool'));
    const load = loadavg();
    release();
    const statuses = await all;
    await new Promise((r) => setTimeout(r, 2000));
    const after = rssBytes(gw.pid);
    // Each file is deleted as its call ends (after its settlement): waited for, bounded.
    const answered = Date.now();
    while ((await spoolFiles(join(dir, 'spool'))) > 0 && Date.now() - answered < 60_000) await new Promise((r) => setTimeout(r, 100));
    const spooledAfter = await spoolFiles(join(dir, 'spool'));
    const secondsUntilSpoolEmpty = (Date.now() - answered) / 1000;
    const ok = statuses.filter((s) => s === 200).length;
    console.log(
      JSON.stringify(
        {
          uploads: N,
          uploadsWaitOn: IN_MEMORY ? 'memory' : 'disk',
          fileMB: +(FILE_BYTES / MB).toFixed(1),
          answered200: ok,
          secondsToAllInFlight: (Date.now() - started) / 1000,
          rssBeforeMB: Math.round(before / MB),
          rssAllInFlightMB: Math.round(inFlight / MB),
          rssPeakMB: Math.round(Math.max(hwm, peakSampled) / MB),
          rssAfterMB: Math.round(after / MB),
          perUploadMB: +((Math.max(hwm, peakSampled) - before) / N / MB).toFixed(1),
          spoolFilesAllInFlight: spooled,
          spoolFilesAfter: spooledAfter,
          secondsUntilSpoolEmpty,
          loadAverage1m5m: load.slice(0, 2).map((x) => +x.toFixed(2)),
          cpus: availableParallelism(),
        },
        null,
        2,
      ),
    );
  } finally {
    await stopAll();
    upstream.close();
    await rm(dir, { recursive: true, force: true });
  }
}

void main().catch(async (err: unknown) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});
