// A fake model provider on 127.0.0.1 speaking the OpenAI wire format (chat, streaming, embeddings), scriptable
// per request: reply, fail with a status, stall before or after headers, cut or stall mid-stream.
import type { ServerResponse } from 'node:http';
import { startRecordingServer, type RecordedCall } from './recording-server.ts';
import { echoedCredential } from './echo-credential.ts';
import { answerResponses } from './responses-wire.ts';

/** A scripted tool call; streamed, its arguments arrive in several fragments. */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: string;
}

export type Behavior =
  | {
      kind: 'reply';
      content?: string;
      usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
      delayMs?: number;
      chunkDelayMs?: number;
      model?: string;
      toolCalls?: FakeToolCall[];
      /** Streamed: the content in exactly these pieces (default: split after each space). */
      pieces?: string[];
      /** Streamed: after the content pieces, stall (no end): only a gateway that cancels the call ends it. */
      thenStall?: boolean;
    }
  | { kind: 'status'; status: number; body?: unknown; retryAfter?: string }
  | { kind: 'stall' }
  | { kind: 'stall-after-headers' }
  | { kind: 'cut'; afterChunks: number }
  | { kind: 'stall-mid'; afterChunks: number }
  /** A streamed reply that ends with an error event after `afterChunks` chunks; `echo`: its message quotes the credential. */
  | { kind: 'error-event'; afterChunks: number; echo?: boolean };

export type { RecordedCall };

export interface FakeUpstream {
  url: string;
  /** Base URL as the OpenAI SDK takes it (ends in /v1). */
  baseUrl: string;
  calls: RecordedCall[];
  /** Upstream requests still open (the client, i.e. the gateway, has not seen their end or cancelled them). */
  readonly open: number;
  /** TCP connections open to the upstream, as it sees them (idle keep-alive connections included). */
  readonly sockets: number;
  /** Queue behaviours for the next requests (probes excepted); when empty, `fallback` answers. */
  enqueue(...b: Behavior[]): void;
  fallback: (call: RecordedCall) => Behavior;
  /** Tokens served so far (what a usage ledger must add up to). */
  served: { prompt: number; completion: number };
  close(): Promise<void>;
}

const DEFAULT_REPLY = 'Hello from the fake upstream.';

/**
 * An availability probe of the gateway (gateway/availability/probe.ts: one "ping", max_tokens 1; or the input "ping"):
 * answered like any call, but not in `served`, since probes are billed to no account.
 */
export function isProbe(call: RecordedCall): boolean {
  const b = call.body;
  if (call.path.endsWith('/embeddings')) return b.input === 'ping';
  return b.max_tokens === 1 && Array.isArray(b.messages) && b.messages.length === 1 && (b.messages[0] as { content?: unknown }).content === 'ping';
}

export async function startFakeUpstream(name = 'fake', host = '127.0.0.1'): Promise<FakeUpstream> {
  const queue: Behavior[] = [];
  const http = await startRecordingServer((call, res) => {
    // A probe of the gateway's availability job never takes a queued behaviour (it comes at any moment): `fallback`.
    const b = (isProbe(call) ? undefined : queue.shift()) ?? fake.fallback(call);
    void answer(fake, name, call, b, res);
  }, host);
  const fake: FakeUpstream = {
    get open() {
      return http.open;
    },
    get sockets() {
      return http.sockets;
    },
    url: http.url,
    baseUrl: `${http.url}/v1`,
    calls: http.calls,
    served: { prompt: 0, completion: 0 },
    enqueue: (...b) => queue.push(...b),
    fallback: () => ({ kind: 'reply' }),
    close: http.close,
  };
  return fake;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function answer(fake: FakeUpstream, name: string, call: RecordedCall, b: Behavior, res: ServerResponse): Promise<void> {
  if (b.kind === 'status') {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (b.retryAfter) headers['retry-after'] = b.retryAfter;
    res.writeHead(b.status, headers).end(JSON.stringify(b.body ?? { error: { message: `${name} failed with ${b.status}`, type: 'server_error' } }));
    return;
  }
  if (b.kind === 'stall') return; // never answers; the gateway's timeout must act
  if (call.path.endsWith('/embeddings')) return embeddings(fake, call, res);
  if (call.path.endsWith('/responses')) return answerResponses(fake, call, b, res);
  const model = String(call.body.model ?? 'unknown');
  const reply = b.kind === 'reply' ? b : { kind: 'reply' as const };
  const toolCalls = reply.toolCalls ?? [];
  const content = reply.content ?? (toolCalls.length > 0 ? '' : DEFAULT_REPLY);
  const usage = reply.usage ?? { prompt_tokens: 11, completion_tokens: 7 };
  if (reply.delayMs) await sleep(reply.delayMs);
  if (call.body.stream === true)
    return stream(fake, { call, res, b, model: reply.model ?? model, content, usage, chunkDelayMs: reply.chunkDelayMs ?? 0, toolCalls });
  if (b.kind === 'cut') {
    res.socket?.destroy();
    return;
  }
  if (b.kind === 'stall-after-headers' || b.kind === 'stall-mid') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"id":"chatcmpl-fake",');
    return;
  }
  if (!isProbe(call)) {
    fake.served.prompt += usage.prompt_tokens;
    fake.served.completion += usage.completion_tokens;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: reply.model ?? model,
      choices: [{ index: 0, message: openAIMessage(content, toolCalls), logprobs: null, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop' }],
      usage: openAIUsage(usage),
    }),
  );
}

function callId(t: FakeToolCall, i: number): string {
  return t.id ?? `call_fake_${i}`;
}

function openAIMessage(content: string, toolCalls: FakeToolCall[]): object {
  if (toolCalls.length === 0) return { role: 'assistant', content, refusal: null };
  return {
    role: 'assistant',
    content: content === '' ? null : content,
    refusal: null,
    tool_calls: toolCalls.map((t, i) => ({ id: callId(t, i), type: 'function', function: { name: t.name, arguments: t.arguments } })),
  };
}

/** Tool-call chunks as OpenAI streams them: id and name first, then the arguments in three fragments. */
function toolCallDeltas(toolCalls: FakeToolCall[]): object[] {
  return toolCalls.flatMap((t, index) => {
    const third = Math.ceil(t.arguments.length / 3);
    const parts = [t.arguments.slice(0, third), t.arguments.slice(third, 2 * third), t.arguments.slice(2 * third)].filter((p) => p !== '');
    return [
      { tool_calls: [{ index, id: callId(t, index), type: 'function', function: { name: t.name, arguments: '' } }] },
      ...parts.map((p) => ({ tool_calls: [{ index, function: { arguments: p } }] })),
    ];
  });
}

function openAIUsage(u: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number }): object {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    ...(u.cached_tokens ? { prompt_tokens_details: { cached_tokens: u.cached_tokens } } : {}),
  };
}

interface StreamArgs {
  call: RecordedCall;
  res: ServerResponse;
  b: Behavior;
  model: string;
  content: string;
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  chunkDelayMs: number;
  toolCalls: FakeToolCall[];
}

async function stream(fake: FakeUpstream, a: StreamArgs): Promise<void> {
  const { res, b } = a;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
  if (b.kind === 'stall-after-headers') return;
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model: a.model };
  const withUsage = (a.call.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const u = withUsage ? { usage: null } : {};
  const pieces = b.kind === 'reply' && b.pieces ? b.pieces : a.content === '' ? [] : a.content.split(/(?<= )/);
  const frames = [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], ...u },
    ...pieces.map((p) => ({ ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null }], ...u })),
    ...toolCallDeltas(a.toolCalls).map((delta) => ({ ...base, choices: [{ index: 0, delta, finish_reason: null }], ...u })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: a.toolCalls.length > 0 ? 'tool_calls' : 'stop' }], ...u },
    ...(withUsage ? [{ ...base, choices: [], usage: openAIUsage(a.usage) }] : []),
  ];
  for (let i = 0; i < frames.length; i++) {
    if (res.destroyed) return;
    if (b.kind === 'error-event' && i === b.afterChunks) {
      const message = b.echo ? echoedCredential(a.call) : 'The server had an error while processing your request.';
      return void res.end(`data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } })}\n\n`);
    }
    if (b.kind === 'reply' && b.thenStall && i === 1 + pieces.length) return;
    if ((b.kind === 'cut' || b.kind === 'stall-mid') && i === b.afterChunks) {
      if (b.kind === 'cut') {
        await sleep(30); // let the chunks written so far reach the gateway first
        res.socket?.destroy();
      }
      return;
    }
    res.write(`data: ${JSON.stringify(frames[i])}\n\n`);
    if (a.chunkDelayMs) await sleep(a.chunkDelayMs);
  }
  fake.served.prompt += a.usage.prompt_tokens;
  fake.served.completion += a.usage.completion_tokens;
  res.end('data: [DONE]\n\n');
}

function embeddings(fake: FakeUpstream, call: RecordedCall, res: ServerResponse): void {
  const input = call.body.input;
  const inputs = Array.isArray(input) ? input : [input];
  const tokens = inputs.length * 5;
  if (!isProbe(call)) fake.served.prompt += tokens;
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      object: 'list',
      model: call.body.model,
      data: inputs.map((_t, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3, index] })),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    }),
  );
}
