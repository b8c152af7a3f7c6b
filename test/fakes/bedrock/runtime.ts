// A fake AWS Bedrock runtime on 127.0.0.1: Converse, ConverseStream, InvokeModel, InvokeModelWithResponseStream (Claude's
// Messages body; Titan and Cohere embeddings), CountTokens and the Agent Runtime's Rerank (POST /rerank), with AWS's error shapes (x-amzn-errortype, {message})
// and event-stream frames encoded with @smithy/eventstream-codec. It checks every request's SigV4 signature against
// its own copy of the credentials (sigv4-check.ts) or a Bedrock API key it knows. Scriptable per request like the
// other fakes: reply, fail with an exception, an exception frame or a corrupted frame mid-stream, stall. The official
// @aws-sdk/client-bedrock-runtime parses its answers (test/clouds/bedrock-fake-sdk.test.ts).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { blockEvents, blocksOf } from '../anthropic-upstream.ts';
import { checkAuth, type FakeAwsKey } from './sigv4-check.ts';

export interface FakeBedrockUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface FakeBedrockTool {
  id?: string;
  name: string;
  input: Record<string, unknown>;
}

export type BedrockBehavior =
  | { kind: 'reply'; text?: string; tools?: FakeBedrockTool[]; usage?: FakeBedrockUsage; chunkDelayMs?: number; stopReason?: string }
  | { kind: 'error'; type: string; status: number; message?: string }
  | { kind: 'stream-exception'; afterEvents: number; type: string; message?: string }
  | { kind: 'corrupt'; afterEvents: number }
  | { kind: 'stall' }
  | { kind: 'stall-after-headers' };

export interface BedrockCall {
  action: string;
  modelId: string;
  rawPath: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: Record<string, unknown>;
  /** Who signed (the access key id, or api-key), or the refusal. */
  auth: string;
}

export interface FakeBedrock {
  url: string;
  calls: BedrockCall[];
  /** Requests without an answer's end yet; TCP connections open (idle keep-alive ones included). */
  readonly open: number;
  readonly sockets: number;
  /** What it billed, summed over completed answers. */
  served: Required<FakeBedrockUsage>;
  keys: Map<string, FakeAwsKey>;
  apiKeys: Set<string>;
  /** Write each event-stream frame in three pieces, a few ms apart (frames split across TCP chunks). */
  splitFrames: boolean;
  enqueue(...b: BedrockBehavior[]): void;
  close(): Promise<void>;
}

/** A 1x1 PNG: every image the fake's image models make. */
export const BEDROCK_FAKE_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
export const BEDROCK_FAKE_REPLY = 'Hello from the fake Bedrock runtime.';
export const DEFAULT_USAGE: Required<FakeBedrockUsage> = { input: 21, output: 9, cacheRead: 0, cacheWrite: 0 };

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const str = (value: string): { type: 'string'; value: string } => ({ type: 'string', value });

export function eventFrame(eventType: string, payload: unknown): Uint8Array {
  const headers: MessageHeaders = { ':event-type': str(eventType), ':content-type': str('application/json'), ':message-type': str('event') };
  return codec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) });
}

export function exceptionFrame(type: string, message: string): Uint8Array {
  const headers: MessageHeaders = { ':exception-type': str(type), ':content-type': str('application/json'), ':message-type': str('exception') };
  return codec.encode({ headers, body: fromUtf8(JSON.stringify({ message })) });
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  res
    .writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': 'fake-request-id',
    })
    .end(JSON.stringify({ message }));
}

export async function startFakeBedrock(opts: { keys?: FakeAwsKey[]; apiKeys?: string[] } = {}): Promise<FakeBedrock> {
  const queue: BedrockBehavior[] = [];
  const sockets = new Set<Socket>();
  let open = 0;
  const server = createServer((req, res) => {
    open++;
    res.once('close', () => open--);
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      handle(req.method ?? 'GET', req.url ?? '/', req.headers, Buffer.concat(parts), res).catch((err: unknown) => {
        console.error('fake Bedrock runtime failed:', err);
        if (!res.headersSent) sendError(res, 500, 'InternalServerException', `the fake failed: ${String(err)}`);
      });
    });
  });
  server.on('connection', (s) => {
    s.setNoDelay(true);
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;

  const fake: FakeBedrock = {
    url: `http://127.0.0.1:${port}`,
    calls: [],
    get open() {
      return open;
    },
    get sockets() {
      return sockets.size;
    },
    served: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    keys: new Map((opts.keys ?? []).map((k) => [k.accessKeyId, k])),
    apiKeys: new Set(opts.apiKeys ?? []),
    splitFrames: false,
    enqueue: (...b) => queue.push(...b),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  async function handle(method: string, rawPath: string, headers: IncomingHttpHeaders, raw: Buffer, res: ServerResponse): Promise<void> {
    const path = rawPath.split('?')[0] ?? '';
    const m =
      path === '/rerank' ? ['', '', 'rerank'] : /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream|count-tokens)$/.exec(path);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      /* recorded as empty */
    }
    const verdict = await checkAuth({ method, rawPath, headers, body: raw, keys: fake.keys, apiKeys: fake.apiKeys });
    const call: BedrockCall = {
      action: m?.[2] ?? '',
      modelId: m?.[2] === 'rerank' ? rerankModelOf(body) : m ? decodeURIComponent(m[1]!) : '',
      rawPath,
      headers,
      raw,
      body,
      auth: verdict.ok ? verdict.who : verdict.type,
    };
    fake.calls.push(call);
    if (!verdict.ok) return sendError(res, verdict.status, verdict.type, verdict.message);
    if (method !== 'POST' || !m) return sendError(res, 404, 'UnknownOperationException', `no operation at ${rawPath}`);
    const b = queue.shift() ?? { kind: 'reply' };
    if (b.kind === 'error') return sendError(res, b.status, b.type, b.message ?? `${b.type} from the fake`);
    if (b.kind === 'stall') return;
    const reply = b.kind === 'reply' ? b : { kind: 'reply' as const };
    const usage = { ...DEFAULT_USAGE, ...reply.usage };
    switch (call.action) {
      case 'rerank':
        return rerank(call, res);
      case 'count-tokens':
        return countTokens(call, res);
      case 'invoke':
        if (/(?:titan|cohere)\.embed|titan-embed/.test(call.modelId)) return embed(call, res);
        if (/titan-image-generator|nova-canvas/.test(call.modelId)) return image(call, res);
        return invoke(call, reply, usage, res);
      case 'converse':
        return converse(reply, usage, res);
      default:
        return streamFrames(res, b, call.action === 'converse-stream' ? converseFrames(reply, usage) : invokeFrames(call, reply, usage), usage);
    }
  }

  function bill(u: Required<FakeBedrockUsage>): void {
    fake.served.input += u.input;
    fake.served.output += u.output;
    fake.served.cacheRead += u.cacheRead;
    fake.served.cacheWrite += u.cacheWrite;
  }

  function countTokens(call: BedrockCall, res: ServerResponse): void {
    const input = (call.body.input ?? {}) as { invokeModel?: { body?: string }; converse?: unknown };
    const text = input.invokeModel?.body ? Buffer.from(input.invokeModel.body, 'base64').toString('utf8') : JSON.stringify(input.converse ?? {});
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const n = Math.ceil(JSON.stringify([parsed.system ?? '', parsed.messages ?? [], parsed.tools ?? []]).length / 4);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ inputTokens: n }));
  }

  /** Rerank: one text query over inline text sources, ranked in reverse order of position; no usage (billed per query). */
  function rerank(call: BedrockCall, res: ServerResponse): void {
    const b = call.body as {
      queries?: Array<{ type?: string; textQuery?: { text?: unknown } }>;
      sources?: Array<{ type?: string; inlineDocumentSource?: { type?: string; textDocument?: { text?: unknown } } }>;
      rerankingConfiguration?: { type?: string; bedrockRerankingConfiguration?: { numberOfResults?: number; modelConfiguration?: { modelArn?: string } } };
    };
    const cfg = b.rerankingConfiguration?.bedrockRerankingConfiguration;
    if (b.queries?.length !== 1 || b.queries[0]?.type !== 'TEXT' || typeof b.queries[0].textQuery?.text !== 'string')
      return sendError(res, 400, 'ValidationException', 'queries must hold one TEXT query');
    const sources = b.sources ?? [];
    if (
      sources.length < 1 ||
      sources.length > 1000 ||
      !sources.every((s) => s.type === 'INLINE' && typeof s.inlineDocumentSource?.textDocument?.text === 'string')
    )
      return sendError(res, 400, 'ValidationException', 'sources must hold 1 to 1000 INLINE TEXT documents');
    if (
      b.rerankingConfiguration?.type !== 'BEDROCK_RERANKING_MODEL' ||
      !/^arn:aws:bedrock:[a-z0-9-]+::foundation-model\/.+/.test(cfg?.modelConfiguration?.modelArn ?? '')
    )
      return sendError(res, 400, 'ValidationException', 'rerankingConfiguration needs a BEDROCK_RERANKING_MODEL with a foundation model ARN');
    const n = cfg?.numberOfResults ?? sources.length;
    if (n < 1 || n > sources.length) return sendError(res, 400, 'ValidationException', 'numberOfResults must be between 1 and the number of sources');
    const results = sources
      .map((_, index) => ({ index, relevanceScore: Math.round((1 - index / (sources.length + 1)) * 1000) / 1000 }))
      .reverse()
      .slice(0, n);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
  }

  function embed(call: BedrockCall, res: ServerResponse): void {
    const vec = (seed: number): number[] => [0.25, -0.5, 0.125 * seed, 1];
    if (call.modelId.includes('cohere')) {
      const texts = (call.body.texts as string[] | undefined) ?? [];
      const tokens = texts.reduce((n, t) => n + t.split(/\s+/).length, 0);
      fake.served.input += tokens;
      res
        .writeHead(200, { 'content-type': 'application/json', 'x-amzn-bedrock-input-token-count': String(tokens) })
        .end(JSON.stringify({ id: 'emb-1', embeddings: texts.map((_, i) => vec(i)), texts, response_type: 'embeddings_floats' }));
      return;
    }
    const tokens = String(call.body.inputText ?? '').split(/\s+/).length;
    fake.served.input += tokens;
    res
      .writeHead(200, { 'content-type': 'application/json', 'x-amzn-bedrock-input-token-count': String(tokens) })
      .end(JSON.stringify({ embedding: vec(0), embeddingsByType: { float: vec(0) }, inputTextTokenCount: tokens }));
  }

  /** Titan Image Generator and Nova Canvas: TEXT_IMAGE with numberOfImages (1-5), width, height, quality. */
  function image(call: BedrockCall, res: ServerResponse): void {
    const b = call.body as { taskType?: unknown; textToImageParams?: { text?: unknown }; imageGenerationConfig?: Record<string, unknown> };
    if (b.taskType === 'INPAINTING') return inpainting(call, res);
    if (b.taskType !== 'TEXT_IMAGE') return sendError(res, 400, 'ValidationException', 'taskType: TEXT_IMAGE and INPAINTING are the tasks this fake serves');
    if (typeof b.textToImageParams?.text !== 'string' || b.textToImageParams.text === '')
      return sendError(res, 400, 'ValidationException', 'textToImageParams.text is required');
    const c = b.imageGenerationConfig ?? {};
    const n = c.numberOfImages ?? 1;
    if (typeof n !== 'number' || n < 1 || n > 5) return sendError(res, 400, 'ValidationException', 'numberOfImages must be between 1 and 5');
    if (c.quality !== undefined && c.quality !== 'standard' && c.quality !== 'premium')
      return sendError(res, 400, 'ValidationException', 'quality must be standard or premium');
    for (const k of ['width', 'height']) {
      const v = c[k];
      if (v !== undefined && (typeof v !== 'number' || v < 320 || v > 4096 || v % 16 !== 0))
        return sendError(res, 400, 'ValidationException', `${k} must be 320 to 4096 and divisible by 16`);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ images: Array.from({ length: n }, () => BEDROCK_FAKE_PNG), error: null }));
  }

  /**
   * INPAINTING: inPaintingParams.image (base64 PNG or JPEG), text, and exactly one of maskImage (a PNG the image's
   * size) or maskPrompt; imageGenerationConfig numberOfImages (1-5), quality; no width or height (the output is the
   * input's size). The "edited" images are the input image sent back.
   */
  function inpainting(call: BedrockCall, res: ServerResponse): void {
    const b = call.body as { inPaintingParams?: Record<string, unknown>; imageGenerationConfig?: Record<string, unknown> };
    const p = b.inPaintingParams ?? {};
    const image = p.image;
    if (typeof image !== 'string' || image === '') return sendError(res, 400, 'ValidationException', 'inPaintingParams.image is required');
    if ((p.maskImage === undefined) === (p.maskPrompt === undefined))
      return sendError(res, 400, 'ValidationException', 'Exactly one of inPaintingParams.maskImage or maskPrompt is required');
    if (p.maskImage !== undefined) {
      const mask = typeof p.maskImage === 'string' ? pngDims(p.maskImage) : null;
      if (mask === null) return sendError(res, 400, 'ValidationException', 'inPaintingParams.maskImage must be a PNG image');
      if (mask !== pngDims(image)) return sendError(res, 400, 'ValidationException', 'The mask image must have the same size as the input image');
    }
    const c = b.imageGenerationConfig ?? {};
    if (c.width !== undefined || c.height !== undefined) return sendError(res, 400, 'ValidationException', 'width and height are not used for INPAINTING');
    const n = c.numberOfImages ?? 1;
    if (typeof n !== 'number' || n < 1 || n > 5) return sendError(res, 400, 'ValidationException', 'numberOfImages must be between 1 and 5');
    if (c.quality !== undefined && c.quality !== 'standard' && c.quality !== 'premium')
      return sendError(res, 400, 'ValidationException', 'quality must be standard or premium');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ images: Array.from({ length: n }, () => image), error: null }));
  }

  function claudeUsage(u: Required<FakeBedrockUsage>): Record<string, number> {
    return { input_tokens: u.input, output_tokens: u.output, cache_read_input_tokens: u.cacheRead, cache_creation_input_tokens: u.cacheWrite };
  }

  function invoke(call: BedrockCall, r: Extract<BedrockBehavior, { kind: 'reply' }>, u: Required<FakeBedrockUsage>, res: ServerResponse): void {
    if (call.body.anthropic_version !== 'bedrock-2023-05-31')
      return sendError(res, 400, 'ValidationException', 'anthropic_version: bedrock-2023-05-31 is required');
    if ('model' in call.body || 'stream' in call.body) return sendError(res, 400, 'ValidationException', 'extraneous key [model] is not permitted');
    bill(u);
    const content = blocksOf({ kind: 'reply', text: r.text ?? (r.tools?.length ? undefined : BEDROCK_FAKE_REPLY), tools: r.tools });
    res
      .writeHead(200, {
        'content-type': 'application/json',
        'x-amzn-bedrock-input-token-count': String(u.input),
        'x-amzn-bedrock-output-token-count': String(u.output),
      })
      .end(
        JSON.stringify({
          id: 'msg_bdrk_fake',
          type: 'message',
          role: 'assistant',
          model: 'claude-fake',
          content,
          stop_reason: r.stopReason ?? (r.tools?.length ? 'tool_use' : 'end_turn'),
          stop_sequence: null,
          usage: claudeUsage(u),
        }),
      );
  }

  function invokeFrames(call: BedrockCall, r: Extract<BedrockBehavior, { kind: 'reply' }>, u: Required<FakeBedrockUsage>): Uint8Array[] {
    const content = blocksOf({ kind: 'reply', text: r.text ?? (r.tools?.length ? undefined : BEDROCK_FAKE_REPLY), tools: r.tools });
    const { output_tokens: _o, ...input } = claudeUsage(u);
    const events: object[] = [
      {
        type: 'message_start',
        message: {
          id: 'msg_bdrk_fake',
          type: 'message',
          role: 'assistant',
          model: 'claude-fake',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...input, output_tokens: 1 },
        },
      },
      ...content.flatMap((block, i) => blockEvents(block, i).map(([, data]) => data)),
      {
        type: 'message_delta',
        delta: { stop_reason: r.stopReason ?? (r.tools?.length ? 'tool_use' : 'end_turn'), stop_sequence: null },
        usage: { output_tokens: u.output },
      },
      {
        type: 'message_stop',
        'amazon-bedrock-invocationMetrics': { inputTokenCount: u.input, outputTokenCount: u.output, invocationLatency: 12, firstByteLatency: 5 },
      },
    ];
    void call;
    return events.map((e) => eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(e)).toString('base64') }));
  }

  function converseContent(r: Extract<BedrockBehavior, { kind: 'reply' }>): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    const text = r.text ?? (r.tools?.length ? '' : BEDROCK_FAKE_REPLY);
    if (text) out.push({ text });
    (r.tools ?? []).forEach((t, i) => out.push({ toolUse: { toolUseId: t.id ?? `tooluse_fake_${i}`, name: t.name, input: t.input } }));
    return out;
  }

  function converseUsage(u: Required<FakeBedrockUsage>): Record<string, number> {
    return {
      inputTokens: u.input,
      outputTokens: u.output,
      totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite,
      cacheReadInputTokens: u.cacheRead,
      cacheWriteInputTokens: u.cacheWrite,
    };
  }

  function converse(r: Extract<BedrockBehavior, { kind: 'reply' }>, u: Required<FakeBedrockUsage>, res: ServerResponse): void {
    bill(u);
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        output: { message: { role: 'assistant', content: converseContent(r) } },
        stopReason: r.stopReason ?? (r.tools?.length ? 'tool_use' : 'end_turn'),
        usage: converseUsage(u),
        metrics: { latencyMs: 12 },
      }),
    );
  }

  function converseFrames(r: Extract<BedrockBehavior, { kind: 'reply' }>, u: Required<FakeBedrockUsage>): Uint8Array[] {
    const frames: Uint8Array[] = [eventFrame('messageStart', { role: 'assistant' })];
    converseContent(r).forEach((block, i) => {
      if (typeof block.text === 'string') {
        for (const piece of block.text.split(/(?<= )/)) frames.push(eventFrame('contentBlockDelta', { contentBlockIndex: i, delta: { text: piece } }));
      } else {
        const t = block.toolUse as { toolUseId: string; name: string; input: unknown };
        frames.push(eventFrame('contentBlockStart', { contentBlockIndex: i, start: { toolUse: { toolUseId: t.toolUseId, name: t.name } } }));
        const json = JSON.stringify(t.input);
        const half = Math.ceil(json.length / 2);
        for (const p of [json.slice(0, half), json.slice(half)])
          if (p) frames.push(eventFrame('contentBlockDelta', { contentBlockIndex: i, delta: { toolUse: { input: p } } }));
      }
      frames.push(eventFrame('contentBlockStop', { contentBlockIndex: i }));
    });
    frames.push(eventFrame('messageStop', { stopReason: r.stopReason ?? (r.tools?.length ? 'tool_use' : 'end_turn') }));
    frames.push(eventFrame('metadata', { usage: converseUsage(u), metrics: { latencyMs: 12 } }));
    return frames;
  }

  async function write(res: ServerResponse, frame: Uint8Array): Promise<void> {
    if (!fake.splitFrames) return void res.write(frame);
    const third = Math.ceil(frame.length / 3);
    for (let i = 0; i < frame.length; i += third) {
      res.write(frame.subarray(i, i + third));
      await sleep(3);
    }
  }

  async function streamFrames(res: ServerResponse, b: BedrockBehavior, frames: Uint8Array[], u: Required<FakeBedrockUsage>): Promise<void> {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'fake-request-id' });
    res.flushHeaders();
    if (b.kind === 'stall-after-headers') return;
    const delay = b.kind === 'reply' ? (b.chunkDelayMs ?? 0) : 0;
    for (let i = 0; i < frames.length; i++) {
      if (res.destroyed) return;
      if (b.kind === 'stream-exception' && i === b.afterEvents) return void res.end(exceptionFrame(b.type, b.message ?? `${b.type} from the fake`));
      if (b.kind === 'corrupt' && i === b.afterEvents) {
        const bad = Buffer.from(frames[i]!);
        bad[bad.length - 6] = (bad[bad.length - 6]! + 1) % 256; // a payload byte: the message CRC no longer matches
        return void res.end(bad);
      }
      await write(res, frames[i]!);
      if (delay) await sleep(delay);
    }
    bill(u);
    res.end();
  }

  return fake;
}

/** The model a Rerank call names (the last segment of its ARN). */
function rerankModelOf(body: Record<string, unknown>): string {
  const arn = (body.rerankingConfiguration as { bedrockRerankingConfiguration?: { modelConfiguration?: { modelArn?: unknown } } } | undefined)
    ?.bedrockRerankingConfiguration?.modelConfiguration?.modelArn;
  return typeof arn === 'string' ? (arn.split('/').at(-1) ?? '') : '';
}

/** A PNG's width and height from its IHDR, or null. */
function pngDims(b64: string): string | null {
  const b = Buffer.from(b64.slice(0, 44), 'base64');
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString('latin1', 12, 16) !== 'IHDR') return null;
  return `${b.readUInt32BE(16)}x${b.readUInt32BE(20)}`;
}
