// The bench's fake upstream, as fast as node:http allows so that it is never the bottleneck: every answer is
// a buffer built once. A chat call answers a fixed completion, or with "stream":true an SSE stream of CHUNKS
// chunks written back to back (the model "bench-paced" spaces them PACE_MS apart, to see them go through
// one by one; "bench-hold" sends its first chunk and holds the rest until a POST to /release, for the scale bench's
// open streams); POST /v1/messages answers a fixed Anthropic message. The other endpoints answer fixed bodies in OpenAI's (and, for rerank, Cohere's / vLLM's) wire format:
// legacy completions (streamed too, usage last), rerank, moderations, a transcription (a duration in its usage), speech
// (mp3 bytes), an image (b64_json) and an uploaded file's object. Run as its own process: node
// test/bench/upstream.ts; prints "listening PORT".
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 20);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 10);
const USAGE = { prompt_tokens: 24, completion_tokens: CHUNKS, total_tokens: 24 + CHUNKS };

function completion(model: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'A fixed answer from the bench upstream, about as long as a short reply.', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: USAGE,
      system_fingerprint: 'fp_bench',
    }),
  );
}

/** One SSE frame per chunk: role, CHUNKS-2 content pieces, finish, then the usage chunk and [DONE]. */
function frames(model: string): Buffer[] {
  const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: 'fp_bench' };
  const out: object[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], usage: null }];
  for (let i = 0; i < CHUNKS - 2; i++)
    out.push({ ...base, choices: [{ index: 0, delta: { content: `word${i} ` }, logprobs: null, finish_reason: null }], usage: null });
  out.push({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], usage: null });
  out.push({ ...base, choices: [], usage: USAGE });
  return [...out.map((f) => Buffer.from(`data: ${JSON.stringify(f)}\n\n`)), Buffer.from('data: [DONE]\n\n')];
}

const TEXT_USAGE = { prompt_tokens: 12, completion_tokens: CHUNKS, total_tokens: 12 + CHUNKS };
const textBase = { id: 'cmpl-bench', object: 'text_completion', created: 1_700_000_000, model: 'bench-text', system_fingerprint: 'fp_bench' };
const TEXT_JSON = Buffer.from(
  JSON.stringify({
    ...textBase,
    choices: [{ index: 0, text: ' a fixed completion from the bench upstream.', logprobs: null, finish_reason: 'stop' }],
    usage: TEXT_USAGE,
  }),
);
const TEXT_SSE = [
  ...Array.from({ length: CHUNKS - 1 }, (_, i) => ({ ...textBase, choices: [{ index: 0, text: `word${i} `, logprobs: null, finish_reason: null }] })),
  { ...textBase, choices: [{ index: 0, text: '', logprobs: null, finish_reason: 'stop' }] },
  { ...textBase, choices: [], usage: TEXT_USAGE },
].map((f) => Buffer.from(`data: ${JSON.stringify(f)}\n\n`));
TEXT_SSE.push(Buffer.from('data: [DONE]\n\n'));
const RERANK = Buffer.from(
  JSON.stringify({
    id: 'rerank-bench',
    model: 'bench-rerank',
    results: [
      { index: 3, relevance_score: 0.91 },
      { index: 0, relevance_score: 0.42 },
      { index: 1, relevance_score: 0.07 },
    ],
    usage: { total_tokens: 96 },
  }),
);
const CATEGORIES = ['harassment', 'hate', 'illicit', 'self-harm', 'sexual', 'violence'];
const MODERATION = Buffer.from(
  JSON.stringify({
    id: 'modr-bench',
    model: 'bench-moderation',
    results: [
      {
        flagged: false,
        categories: Object.fromEntries(CATEGORIES.map((c) => [c, false])),
        category_scores: Object.fromEntries(CATEGORIES.map((c) => [c, 0.0001])),
        category_applied_input_types: Object.fromEntries(CATEGORIES.map((c) => [c, ['text']])),
      },
    ],
  }),
);

const TRANSCRIPTION = Buffer.from(JSON.stringify({ text: 'Say something short.', usage: { type: 'duration', seconds: 1 } }));
/** 4 kB of "mp3": an ID3 tag's magic, then bytes (the gateway passes speech through as it comes). */
const SPEECH = Buffer.concat([Buffer.from('ID3\x04\0\0\0\0\0\0', 'latin1'), Buffer.alloc(4086, 0x55)]);
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const IMAGE = Buffer.from(JSON.stringify({ created: 1_700_000_000, data: [{ b64_json: PNG_1X1 }] }));
const FILE = Buffer.from(
  JSON.stringify({ id: 'file-bench', object: 'file', bytes: 200, created_at: 1_700_000_000, filename: 'batch.jsonl', purpose: 'batch', status: 'processed' }),
);

/** The endpoints beyond chat: a fixed answer each (a completions stream written chunk by chunk, as chat's). */
function other(res: ServerResponse, path: string, body: string): boolean {
  const send = (b: Buffer): void => void res.writeHead(200, { 'content-type': 'application/json', 'content-length': b.length }).end(b);
  if (path.endsWith('/completions') && !path.endsWith('/chat/completions')) {
    if (!body.includes('"stream":true')) send(TEXT_JSON);
    else {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (let i = 0; i < TEXT_SSE.length - 1; i++) res.write(TEXT_SSE[i]);
      res.end(TEXT_SSE[TEXT_SSE.length - 1]);
    }
    return true;
  }
  if (path.endsWith('/rerank')) return (send(RERANK), true);
  if (path.endsWith('/moderations')) return (send(MODERATION), true);
  if (path.endsWith('/audio/transcriptions')) return (send(TRANSCRIPTION), true);
  if (path.endsWith('/images/generations')) return (send(IMAGE), true);
  if (path.endsWith('/files')) return (send(FILE), true);
  if (path.endsWith('/audio/speech')) {
    res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': SPEECH.length }).end(SPEECH);
    return true;
  }
  return false;
}

/** An Anthropic Messages answer (POST /v1/messages), for routes whose target speaks Anthropic's API. */
const MESSAGE = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: 'bench-claude',
    content: [{ type: 'text', text: 'A fixed answer from the bench upstream, about as long as a short reply.' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 24, output_tokens: CHUNKS },
  }),
);

const MODELS = ['bench-chat', 'bench-paced', 'bench-hold'];
/** Streams of bench-hold waiting for /release, with the chunks they still owe. */
const held = new Set<{ res: ServerResponse; rest: Buffer[] }>();

function release(): number {
  const count = held.size;
  for (const h of held) {
    for (const c of h.rest) h.res.write(c);
    h.res.end();
  }
  held.clear();
  return count;
}
const json = new Map(MODELS.map((m) => [m, completion(m)]));
const sse = new Map(MODELS.map((m) => [m, frames(m)]));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function paced(res: ServerResponse, chunks: Buffer[]): Promise<void> {
  for (const c of chunks) {
    if (res.destroyed) return;
    res.write(c);
    await sleep(PACE_MS);
  }
  res.end();
}

function answer(res: ServerResponse, path: string, body: string): void {
  if (other(res, path, body)) return;
  const model = MODELS.find((m) => body.includes(`"model":"${m}"`)) ?? 'bench-chat';
  if (!body.includes('"stream":true')) {
    const b = json.get(model) as Buffer;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': b.length }).end(b);
    return;
  }
  const chunks = sse.get(model) as Buffer[];
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (model === 'bench-hold') {
    res.write(chunks[0]);
    const h = { res, rest: chunks.slice(1) };
    held.add(h);
    res.once('close', () => held.delete(h));
    return;
  }
  if (model === 'bench-paced') {
    res.flushHeaders();
    void paced(res, chunks);
    return;
  }
  // Each chunk its own write, as a model server does: the proxies see many small chunks, not one buffer.
  for (let i = 0; i < chunks.length - 1; i++) res.write(chunks[i]);
  res.end(chunks[chunks.length - 1]);
}

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    if (req.url === '/release') res.end(String(release()));
    else if (req.url?.startsWith('/v1/messages')) res.writeHead(200, { 'content-type': 'application/json', 'content-length': MESSAGE.length }).end(MESSAGE);
    else answer(res, req.url ?? '/', body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => process.exit(0));
