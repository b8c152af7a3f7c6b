// A fake model provider on 127.0.0.1 speaking the Anthropic Messages wire format (messages, streaming,
// count_tokens), scriptable per request like test/fakes/upstream.ts: reply (text, tool use, thinking, cache
// usage), fail with a status, stall before or after headers, cut or stall mid-stream, or end with an error event.
import type { ServerResponse } from 'node:http';
import { echoedCredential } from './echo-credential.ts';
import { startRecordingServer, type RecordedCall } from './recording-server.ts';

export interface FakeToolUse {
  id?: string;
  name: string;
  input: Record<string, unknown>;
}

export interface AnthropicFakeUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export type AnthropicBehavior =
  | {
      kind: 'reply';
      text?: string;
      tools?: FakeToolUse[];
      thinking?: string;
      usage?: AnthropicFakeUsage;
      stopReason?: string;
      delayMs?: number;
      chunkDelayMs?: number;
      model?: string;
      /** Streamed: after the first block's deltas, stall (no end): only a gateway that cancels the call ends it. */
      thenStall?: boolean;
    }
  | { kind: 'status'; status: number; body?: unknown; retryAfter?: string }
  | { kind: 'stall' }
  | { kind: 'stall-after-headers' }
  | { kind: 'cut'; afterEvents: number }
  | { kind: 'stall-mid'; afterEvents: number }
  | { kind: 'error-event'; afterEvents: number; /** The message quotes the credential. */ echo?: boolean };

export type { RecordedCall };

export interface FakeAnthropic {
  url: string;
  /** Base URL as the Anthropic SDK takes it (no /v1). */
  baseUrl: string;
  calls: RecordedCall[];
  /** Upstream requests still open (the client, i.e. the gateway, has not seen their end or cancelled them). */
  readonly open: number;
  /** TCP connections open to the upstream, as it sees them (idle keep-alive connections included). */
  readonly sockets: number;
  enqueue(...b: AnthropicBehavior[]): void;
  fallback: (call: RecordedCall) => AnthropicBehavior;
  served: { input: number; output: number };
  close(): Promise<void>;
}

export const ANTHROPIC_FAKE_REPLY = 'Hello from the fake Anthropic upstream.';

export async function startFakeAnthropic(name = 'fake-anthropic', host = '127.0.0.1'): Promise<FakeAnthropic> {
  const queue: AnthropicBehavior[] = [];
  const http = await startRecordingServer((call, res) => {
    const path = call.path.split('?')[0];
    if (path === '/v1/messages/count_tokens') return void countTokens(call, res);
    if (call.method !== 'POST' || path !== '/v1/messages') return void notFound(res, call.path);
    if (hasSystemTurn(call.body)) return void systemTurn(res);
    void answerMessages(fake, name, call, queue.shift() ?? fake.fallback(call), res);
  }, host);
  const fake: FakeAnthropic = {
    get open() {
      return http.open;
    },
    get sockets() {
      return http.sockets;
    },
    url: http.url,
    baseUrl: http.url,
    calls: http.calls,
    served: { input: 0, output: 0 },
    enqueue: (...b) => queue.push(...b),
    fallback: () => ({ kind: 'reply' }),
    close: http.close,
  };
  return fake;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function errorBody(type: string, message: string): object {
  return { type: 'error', error: { type, message } };
}

function notFound(res: ServerResponse, path: string): void {
  res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody('not_found_error', `no route ${path}`)));
}

// The real API refuses a system role inside `messages` (the system prompt is the top-level `system`).
function hasSystemTurn(body: RecordedCall['body']): boolean {
  return Array.isArray(body.messages) && body.messages.some((m) => typeof m === 'object' && m !== null && (m as { role?: unknown }).role === 'system');
}

function systemTurn(res: ServerResponse): void {
  const message = 'Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.';
  res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody('invalid_request_error', message)));
}

function countTokens(call: RecordedCall, res: ServerResponse): void {
  const n = Math.ceil(JSON.stringify([call.body.system ?? '', call.body.messages ?? [], call.body.tools ?? []]).length / 4);
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: n }));
}

type Reply = Extract<AnthropicBehavior, { kind: 'reply' }>;

export function blocksOf(r: Reply): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = [];
  if (r.thinking) blocks.push({ type: 'thinking', thinking: r.thinking, signature: 'c2lnbmF0dXJl' });
  const tools = r.tools ?? [];
  const text = r.text ?? (tools.length > 0 ? '' : ANTHROPIC_FAKE_REPLY);
  if (text !== '') blocks.push({ type: 'text', text });
  tools.forEach((t, i) => blocks.push({ type: 'tool_use', id: t.id ?? `toolu_fake_${i}`, name: t.name, input: t.input }));
  return blocks;
}

function usageOf(r: Reply): Required<AnthropicFakeUsage> {
  const u = r.usage ?? { input_tokens: 13, output_tokens: 9 };
  return { cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...u };
}

/** Answers one Messages call as the fake would (also used by the Vertex fake for Claude's rawPredict). */
export async function answerMessages(
  fake: Pick<FakeAnthropic, 'served'>,
  name: string,
  call: RecordedCall,
  b: AnthropicBehavior,
  res: ServerResponse,
): Promise<void> {
  if (b.kind === 'status') {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (b.retryAfter) headers['retry-after'] = b.retryAfter;
    res
      .writeHead(b.status, headers)
      .end(JSON.stringify(b.body ?? errorBody(b.status === 529 ? 'overloaded_error' : 'api_error', `${name} failed with ${b.status}`)));
    return;
  }
  if (b.kind === 'stall') return; // never answers; the gateway's timeout must act
  const reply: Reply = b.kind === 'reply' ? b : { kind: 'reply' };
  if (reply.delayMs) await sleep(reply.delayMs);
  const model = reply.model ?? String(call.body.model ?? 'unknown');
  const blocks = blocksOf(reply);
  const usage = usageOf(reply);
  const stopReason = reply.stopReason ?? (reply.tools?.length ? 'tool_use' : 'end_turn');
  if (call.body.stream === true) return stream(fake, { call, res, b, model, blocks, usage, stopReason, chunkDelayMs: reply.chunkDelayMs ?? 0 });
  if (b.kind === 'cut') return void res.socket?.destroy();
  if (b.kind === 'stall-after-headers' || b.kind === 'stall-mid') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"id":"msg_fake",');
    return;
  }
  fake.served.input += usage.input_tokens;
  fake.served.output += usage.output_tokens;
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_fake' }).end(
    JSON.stringify({
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model,
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    }),
  );
}

interface StreamArgs {
  call: RecordedCall;
  res: ServerResponse;
  b: AnthropicBehavior;
  model: string;
  blocks: Array<Record<string, unknown>>;
  usage: Required<AnthropicFakeUsage>;
  stopReason: string;
  chunkDelayMs: number;
}

/** The events of one block: start, deltas (text by word, tool input JSON in three fragments), stop. */
export function blockEvents(block: Record<string, unknown>, index: number): Array<[string, object]> {
  const delta = (d: object): [string, object] => ['content_block_delta', { type: 'content_block_delta', index, delta: d }];
  const events: Array<[string, object]> = [];
  if (block.type === 'text') {
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
    for (const piece of String(block.text).split(/(?<= )/)) events.push(delta({ type: 'text_delta', text: piece }));
  } else if (block.type === 'thinking') {
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }]);
    events.push(delta({ type: 'thinking_delta', thinking: block.thinking }), delta({ type: 'signature_delta', signature: block.signature }));
  } else {
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }]);
    const json = JSON.stringify(block.input);
    const third = Math.ceil(json.length / 3);
    for (const p of [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)])
      if (p) events.push(delta({ type: 'input_json_delta', partial_json: p }));
  }
  events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  return events;
}

async function stream(fake: Pick<FakeAnthropic, 'served'>, a: StreamArgs): Promise<void> {
  const { res, b } = a;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_fake' });
  res.flushHeaders();
  if (b.kind === 'stall-after-headers') return;
  const { output_tokens: output, ...input } = a.usage;
  const events: Array<[string, object]> = [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id: 'msg_fake',
          type: 'message',
          role: 'assistant',
          model: a.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...input, output_tokens: 1 },
        },
      },
    ],
    ['ping', { type: 'ping' }],
    ...a.blocks.flatMap(blockEvents),
    ['message_delta', { type: 'message_delta', delta: { stop_reason: a.stopReason, stop_sequence: null }, usage: { output_tokens: output } }],
    ['message_stop', { type: 'message_stop' }],
  ];
  for (let i = 0; i < events.length; i++) {
    if (res.destroyed) return;
    if (b.kind === 'cut' && i === b.afterEvents) {
      await sleep(30); // let the events written so far reach the gateway first
      return void res.socket?.destroy();
    }
    if (b.kind === 'stall-mid' && i === b.afterEvents) return;
    if (b.kind === 'error-event' && i === b.afterEvents) {
      const message = b.echo ? echoedCredential(a.call) : 'Overloaded';
      return void res.end(`event: error\ndata: ${JSON.stringify(errorBody('overloaded_error', message))}\n\n`);
    }
    const [type, data] = events[i] as [string, object];
    if (b.kind === 'reply' && b.thenStall && type === 'content_block_stop') return;
    res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
    if (a.chunkDelayMs) await sleep(a.chunkDelayMs);
  }
  fake.served.input += a.usage.input_tokens;
  fake.served.output += a.usage.output_tokens;
  res.end();
}
