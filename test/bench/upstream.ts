// The bench's fake upstream, as fast as node:http allows so that it is never the bottleneck: every answer is
// a buffer built once. A chat call answers a fixed completion, or with "stream":true an SSE stream of CHUNKS
// chunks written back to back (the model "bench-paced" spaces them PACE_MS apart, to see them go through
// one by one; "bench-hold" sends its first chunk and holds the rest until a POST to /release, for the scale bench's
// open streams). Run as its own process: node test/bench/upstream.ts; prints "listening PORT".
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

function answer(res: ServerResponse, body: string): void {
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
  req.on('end', () => (req.url === '/release' ? res.end(String(release())) : answer(res, body)));
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => process.exit(0));
