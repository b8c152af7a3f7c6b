// A fake audio provider on 127.0.0.1 speaking OpenAI's wire format for /audio/transcriptions, /audio/translations
// (multipart/form-data in; JSON, text, SRT, VTT, verbose JSON or transcript.text.* events out) and /audio/speech
// (JSON in; audio bytes in chunks, or speech.audio.* events), at OpenAI's paths ({base}/v1/audio/...) and Azure
// OpenAI's (/openai/deployments/{deployment}/audio/...?api-version= and /openai/v1/audio/...), with each one's auth
// (a bearer token, Azure's api-key header). It records what it was sent: the fields, the file's bytes and name.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export const OPENAI_KEY = 'sk-fake-openai-audio-0123456789';
export const AZURE_KEY = 'azure-fake-audio-key-0123456789';
export const TRANSCRIPT = 'The beach was a popular spot on a hot summer day.';

export interface AudioCall {
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** Multipart fields (repeated names in order) or the JSON body's fields. */
  fields: Array<[string, string]>;
  json: Record<string, unknown> | null;
  file: { name: string; type: string; bytes: Buffer } | null;
}

export interface AudioUpstream {
  url: string;
  baseUrl: string;
  calls: AudioCall[];
  /** What the next token-billed answers report. */
  usage: { textTokens: number; audioTokens: number; outputTokens: number; speechInput: number; speechOutput: number };
  /** The audio bytes speech answers carry (sent in 1 kB chunks, `chunkDelayMs` apart). */
  speechBytes: Buffer;
  chunkDelayMs: number;
  /** Answer this status to the next calls (a failing upstream), null: answer. */
  failWith: number | null;
  /** Held until resolved, when set (calls in flight together). */
  gate: Promise<void> | null;
  /** Connections open at the fake now (a cancelled call's socket must not stay open). */
  sockets(): number;
  close(): Promise<void>;
}

export async function startAudioUpstream(): Promise<AudioUpstream> {
  const speechBytes = Buffer.alloc(5000);
  for (let i = 0; i < speechBytes.length; i++) speechBytes[i] = (i * 7) & 0xff;
  const fake: AudioUpstream = {
    url: '',
    baseUrl: '',
    calls: [],
    usage: { textTokens: 7, audioTokens: 40, outputTokens: 12, speechInput: 5, speechOutput: 180 },
    speechBytes,
    chunkDelayMs: 0,
    failWith: null,
    gate: null,
    sockets: () => open.size,
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => void handle(fake, req, Buffer.concat(parts), res).catch(() => res.destroy()));
  });
  const open = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}`;
  fake.baseUrl = `${fake.url}/v1`;
  fake.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};
const error = (res: ServerResponse, status: number, message: string): void =>
  json(res, status, { error: { message, type: 'invalid_request_error', param: null, code: null } });

async function handle(fake: AudioUpstream, req: IncomingMessage, raw: Buffer, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', fake.url);
  const azure = url.pathname.startsWith('/openai/');
  const op = /\/audio\/(transcriptions|translations|speech)$/.exec(url.pathname)?.[1];
  if (azure ? req.headers['api-key'] !== AZURE_KEY : req.headers.authorization !== `Bearer ${OPENAI_KEY}`) return error(res, 401, 'Incorrect API key provided');
  if (!op || (!azure && !url.pathname.startsWith('/v1/audio/'))) return error(res, 404, `no route ${url.pathname}`);
  if (azure && url.pathname.startsWith('/openai/deployments/') && !url.searchParams.get('api-version')) return error(res, 404, 'Resource not found');
  const call: AudioCall = { path: url.pathname, query: url.searchParams, headers: req.headers, fields: [], json: null, file: null };
  if (op === 'speech') {
    call.json = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    call.fields = Object.entries(call.json).map(([k, v]) => [k, String(v)]);
  } else {
    // The multipart body read by the platform's own parser (undici's Request.formData, as a server would).
    const form = await new Request(fake.url, { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body: raw }).formData();
    for (const [k, v] of form.entries()) {
      if (typeof v === 'string') call.fields.push([k, v]);
      else call.file = { name: v.name, type: v.type, bytes: Buffer.from(await v.arrayBuffer()) };
    }
    if (Number(req.headers['content-length']) !== raw.length) return error(res, 400, 'content-length does not match the body');
  }
  fake.calls.push(call);
  if (fake.gate) await fake.gate;
  if (fake.failWith !== null) return error(res, fake.failWith, `failing with ${fake.failWith}`);
  if (op === 'speech') return speech(fake, call, res);
  return transcription(fake, call, op, res);
}

function transcription(fake: AudioUpstream, call: AudioCall, op: string, res: ServerResponse): void {
  const f = new Map(call.fields);
  if (!call.file) return error(res, 400, 'file is required');
  const model = f.get('model') ?? '';
  const tokens = model.startsWith('gpt-4o');
  const u = fake.usage;
  const tokenUsage = {
    type: 'tokens',
    input_tokens: u.textTokens + u.audioTokens,
    input_token_details: { text_tokens: u.textTokens, audio_tokens: u.audioTokens },
    output_tokens: u.outputTokens,
    total_tokens: u.textTokens + u.audioTokens + u.outputTokens,
  };
  if (f.get('stream') === 'true' && tokens) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const w of TRANSCRIPT.split(' ')) res.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta: `${w} ` })}\n\n`);
    res.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text: TRANSCRIPT, usage: tokenUsage })}\n\n`);
    return;
  }
  const seconds = 3;
  const usage = tokens ? tokenUsage : { type: 'duration', seconds };
  switch (f.get('response_format') ?? 'json') {
    case 'text':
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`${TRANSCRIPT}\n`);
      return;
    case 'srt':
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`1\n00:00:00,000 --> 00:00:02,500\n${TRANSCRIPT}\n\n`);
      return;
    case 'vtt':
      res.writeHead(200, { 'content-type': 'text/vtt; charset=utf-8' }).end(`WEBVTT\n\n00:00:00.000 --> 00:00:02.500\n${TRANSCRIPT}\n\n`);
      return;
    case 'verbose_json': {
      const words = f.has('timestamp_granularities[]') ? { words: [{ word: 'The', start: 0, end: 0.2 }] } : {};
      const segments = [
        {
          id: 0,
          seek: 0,
          start: 0,
          end: 2.5,
          text: TRANSCRIPT,
          tokens: [50364, 440],
          temperature: 0,
          avg_logprob: -0.28,
          compression_ratio: 1.2,
          no_speech_prob: 0.01,
        },
      ];
      json(res, 200, {
        task: op === 'translations' ? 'translate' : 'transcribe',
        language: 'english',
        duration: 2.5,
        text: TRANSCRIPT,
        segments,
        ...words,
        usage: { type: 'duration', seconds },
      });
      return;
    }
    default:
      json(res, 200, op === 'translations' ? { text: TRANSCRIPT } : { text: TRANSCRIPT, usage });
  }
}

const SPEECH_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

async function speech(fake: AudioUpstream, call: AudioCall, res: ServerResponse): Promise<void> {
  const body = call.json ?? {};
  const chunks: Buffer[] = [];
  for (let i = 0; i < fake.speechBytes.length; i += 1024) chunks.push(fake.speechBytes.subarray(i, i + 1024));
  if (body.stream_format === 'sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const c of chunks) {
      res.write(`data: ${JSON.stringify({ type: 'speech.audio.delta', audio: c.toString('base64') })}\n\n`);
      if (fake.chunkDelayMs > 0) await sleep(fake.chunkDelayMs);
    }
    const u = fake.usage;
    res.end(
      `data: ${JSON.stringify({ type: 'speech.audio.done', usage: { input_tokens: u.speechInput, output_tokens: u.speechOutput, total_tokens: u.speechInput + u.speechOutput } })}\n\n`,
    );
    return;
  }
  res.writeHead(200, { 'content-type': SPEECH_TYPES[String(body.response_format ?? 'mp3')] ?? 'application/octet-stream' });
  for (const c of chunks) {
    if (res.destroyed) return;
    res.write(c);
    if (fake.chunkDelayMs > 0) await sleep(fake.chunkDelayMs);
  }
  res.end();
}
