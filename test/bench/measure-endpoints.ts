// The hot-path cost of each endpoint beside chat, on one gateway process (in-memory store): a chat completion, a
// legacy text completion (plain and streamed), a rerank (its hold bounded by search units), a moderation, a
// transcription of a small clip (a multipart upload: its format sniffed and its length read from its header), speech
// (audio bytes passed through), an image generation (priced per image) and a batch file upload (kept by the gateway
// itself: its lines checked, no upstream call), each
// next to the same call sent to the bench upstream directly, in the same run. One at a time (what a call adds),
// then saturated over 32 connections (throughput and the gateway's CPU per call). Every call through the gateway
// takes the same steps as chat: key, limits, hold, translation, settle, usage event.
import { toneWav8 } from '../../gateway/providers/mock/audio-bytes.ts';
import { Client, saturate, serial, stats, type Call, type Stats } from './load.ts';
import type { Durations } from './measure.ts';
import { CONNECTIONS } from './measure.ts';
import { cpuSeconds, type Proc } from './procs.ts';
import type { Subject } from './subjects.ts';

export interface EndpointRow {
  endpoint: string;
  direct: Stats;
  via: Stats;
  /** p50 one at a time through the gateway minus direct (ms). */
  addedP50: number;
  rps: number;
  satP50: number;
  /** The gateway's CPU per call at saturation (µs). */
  cpuUs: number;
  errors: number;
}

/** A multipart/form-data body, built once. */
interface Form {
  contentType: string;
  bytes: Buffer;
}

const BOUNDARY = 'bench-form-boundary-0123456789';

function form(fields: ReadonlyArray<readonly [string, string]>, file: { name: string; type: string; bytes: Buffer }): Form {
  const parts: Buffer[] = fields.map(([k, v]) => Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="${file.name}"\r\ncontent-type: ${file.type}\r\n\r\n`));
  parts.push(file.bytes, Buffer.from(`\r\n--${BOUNDARY}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${BOUNDARY}`, bytes: Buffer.concat(parts) };
}

const BATCH_LINE = JSON.stringify({
  custom_id: 'bench-1',
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'bench-chat', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 64 },
});

interface Endpoint {
  name: string;
  path: string;
  body: object | Form;
  /** A piece of a good answer, checked before measuring (a misrouted call would measure errors). */
  expect: string;
}

const DOCS = ['The capital of France is Paris.', 'Berlin lies on the Spree.', 'Rome was not built in a day.', 'Paris has the Seine.'];

export const ENDPOINTS: readonly Endpoint[] = [
  {
    name: 'chat completions',
    path: '/v1/chat/completions',
    body: { model: 'bench-chat', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 64 },
    expect: '"choices"',
  },
  { name: 'completions', path: '/v1/completions', body: { model: 'bench-text', prompt: 'Say something short.', max_tokens: 64 }, expect: '"text_completion"' },
  {
    name: 'completions (stream)',
    path: '/v1/completions',
    body: { model: 'bench-text', prompt: 'Say something short.', max_tokens: 64, stream: true },
    expect: 'data: [DONE]',
  },
  { name: 'rerank', path: '/v1/rerank', body: { model: 'bench-rerank', query: 'capital of France', documents: DOCS, top_n: 3 }, expect: '"relevance_score"' },
  { name: 'moderations', path: '/v1/moderations', body: { model: 'bench-moderation', input: 'Say something short.' }, expect: '"flagged"' },
  {
    name: 'audio transcription (1 s WAV, 8 kB)',
    path: '/v1/audio/transcriptions',
    body: form([['model', 'bench-whisper']], { name: 'clip.wav', type: 'audio/wav', bytes: toneWav8(1) }),
    expect: '"text"',
  },
  {
    name: 'audio speech (4 kB mp3)',
    path: '/v1/audio/speech',
    body: { model: 'bench-tts', input: 'Say something short.', voice: 'alloy' },
    expect: 'ID3',
  },
  {
    name: 'image generation',
    path: '/v1/images/generations',
    body: { model: 'bench-image', prompt: 'A lighthouse at dusk.', size: '1024x1024', response_format: 'b64_json' },
    expect: '"b64_json"',
  },
  {
    name: 'batch file upload (1 line)',
    path: '/v1/files',
    body: form([['purpose', 'batch']], { name: 'batch.jsonl', type: 'application/jsonl', bytes: Buffer.from(`${BATCH_LINE}\n`) }),
    expect: '"object":"file"',
  },
];

async function check(c: Client, expect: string, what: string): Promise<void> {
  const r = await c.text();
  if (r.status !== 200 || !r.body.includes(expect)) throw new Error(`${what} answered ${r.status} to the bench's call: ${r.body.slice(0, 500)}`);
}

async function timed(call: Call, expect: string, what: string, d: Durations, gateway: Proc | null) {
  const c = new Client(call, 1);
  try {
    await check(c, expect, what);
    await saturate(call, CONNECTIONS, d.warmMs);
    const ser = await serial(c, d.serialMs);
    const cpu0 = gateway ? cpuSeconds(gateway.pid) : 0;
    const sat = await saturate(call, CONNECTIONS, d.satMs);
    const cpu = gateway ? cpuSeconds(gateway.pid) - cpu0 : 0;
    const done = sat.latency.count;
    return { serial: stats(ser.total), sat, cpuUs: gateway && done > 0 ? (cpu / done) * 1e6 : 0, errors: ser.errors + sat.errors };
  } finally {
    await c.close();
  }
}

export async function measureEndpoints(s: Subject, up: Proc, d: Durations): Promise<EndpointRow[]> {
  const gw = s.procs[0] as Proc;
  const rows: EndpointRow[] = [];
  for (const e of ENDPOINTS) {
    // The upstream gets the model name the gateway would send (each route's upstreamModel is its own id).
    const multipart = 'bytes' in e.body ? (e.body as Form) : null;
    const body = multipart ? multipart.bytes : JSON.stringify(e.body);
    const headers = { 'content-type': multipart ? multipart.contentType : 'application/json' };
    const direct = await timed(
      { urls: [`http://127.0.0.1:${up.port}`], path: e.path, headers: { ...headers, authorization: 'Bearer sk-bench' }, body },
      e.expect,
      `${e.name} direct`,
      d,
      null,
    );
    const via = await timed({ urls: s.urls, path: e.path, headers: { ...headers, ...s.headers }, body }, e.expect, `${e.name} through the gateway`, d, gw);
    rows.push({
      endpoint: e.name,
      direct: direct.serial,
      via: via.serial,
      addedP50: via.serial.p50 - direct.serial.p50,
      rps: via.sat.rps,
      satP50: via.sat.latency.p50,
      cpuUs: via.cpuUs,
      errors: direct.errors + via.errors,
    });
  }
  return rows;
}

const ms = (x: number): string => x.toFixed(2);

export function endpointsReport(rows: readonly EndpointRow[]): string {
  const lines = [
    '### Endpoints beside chat (one gateway process, in-memory store, priced models)',
    '',
    '| endpoint | p50 direct (ms) | p50 / p99 through the gateway (ms) | added p50 (ms) | req/s (saturated, 32 conns) | p50 saturated (ms) | gateway CPU per call (µs) | errors |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.endpoint} | ${ms(r.direct.p50)} | ${ms(r.via.p50)} / ${ms(r.via.p99)} | ${ms(r.addedP50)} | ${Math.round(r.rps).toLocaleString('en-US')} | ${ms(r.satP50)} | ${Math.round(r.cpuUs)} | ${r.errors} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
