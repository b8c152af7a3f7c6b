// The bench's fake Bedrock runtime for the `gateway-bedrock` subject: Claude through InvokeModel and
// InvokeModelWithResponseStream, every answer built once (the stream's event-stream frames encoded once with
// @smithy/eventstream-codec), so that the gateway's SigV4 signing and event-stream decoding are what the subject adds
// over the plain gateway. It does not verify signatures (test/fakes/bedrock does; here it would only slow the
// upstream). A model id containing "paced" spaces the stream's frames PACE_MS apart. Prints "listening PORT".
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 20);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 10);
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const str = (value: string): { type: 'string'; value: string } => ({ type: 'string', value });

const message = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: 'claude-bench',
    content: [{ type: 'text', text: 'A fixed answer from the bench upstream, about as long as a short reply.' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 24, output_tokens: CHUNKS, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  }),
);

function frame(event: object): Buffer {
  const body = fromUtf8(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') }));
  return Buffer.from(codec.encode({ headers: { ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event') }, body }));
}

const frames: Buffer[] = [
  frame({
    type: 'message_start',
    message: {
      id: 'msg_bench',
      type: 'message',
      role: 'assistant',
      model: 'claude-bench',
      content: [],
      stop_reason: null,
      usage: { input_tokens: 24, output_tokens: 1 },
    },
  }),
  frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  ...Array.from({ length: CHUNKS - 2 }, (_, i) => frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `word${i} ` } })),
  frame({ type: 'content_block_stop', index: 0 }),
  frame({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: CHUNKS } }),
  frame({ type: 'message_stop' }),
];
const whole = Buffer.concat(frames);

async function paced(res: ServerResponse): Promise<void> {
  for (const f of frames) {
    if (res.destroyed) return;
    res.write(f);
    await new Promise((r) => setTimeout(r, PACE_MS));
  }
  res.end();
}

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const url = req.url ?? '';
    if (url.endsWith('/invoke')) return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': message.length }).end(message);
    if (url.endsWith('/invoke-with-response-stream')) {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      if (url.includes('paced')) return void paced(res);
      return void res.end(whole);
    }
    res.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'UnknownOperationException' }).end('{"message":"not found"}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
