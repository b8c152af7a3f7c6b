// A fake model provider on 127.0.0.1 for the money tests: answers in the OpenAI (chat completions with
// `n` choices, also streamed; Responses, embeddings) and Anthropic (messages) wire formats, whose `usage` is either honest (what a
// real upstream would count: input from the body's size plus ~765 tokens per image, output up to the cap the request
// carries times `n`, or a long answer when it carries none) or scripted verbatim as JSON text, so a test can send
// what no SDK would: 5,000,000 tokens, 1e15, -5, "12", 3.5, 1e999, null or no usage at all.
import type { ServerResponse } from 'node:http';
import { startRecordingServer, type RecordedCall } from './recording-server.ts';

/** Tokens an honest upstream counts per image part (OpenAI's figure for a 512×512 high-detail tile image). */
export const HONEST_IMAGE_TOKENS = 765;
/** Output of an honest but long-winded model when the request sets no cap. */
export const UNCAPPED_OUTPUT = 20_000;

export interface UsageFake {
  url: string;
  /** Base URL as the OpenAI SDK takes it (ends in /v1). */
  baseUrl: string;
  calls: RecordedCall[];
  /**
   * The usage the next answers carry, as JSON text in the upstream's own field names (`"{\"prompt_tokens\":5e6}"`),
   * or `absent` (no usage field), or undefined: honest. Set per test.
   */
  usageText: string | 'absent' | undefined;
  /**
   * The output bound fields this upstream honours, first found first (the default reads every dialect's, Chat's
   * max_completion_tokens first, as OpenAI does); many OpenAI-compatible vendors read only `max_tokens`.
   */
  boundFields: readonly string[];
  close(): Promise<void>;
}

const EVERY_BOUND = ['max_completion_tokens', 'max_tokens', 'max_output_tokens'];

function images(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + images(x), 0);
  if (v === null || typeof v !== 'object') return 0;
  const o = v as Record<string, unknown>;
  const own = o.type === 'image_url' || o.type === 'input_image' || o.type === 'image' ? 1 : 0;
  return own + Object.values(o).reduce((n: number, x) => n + images(x), 0);
}

function cap(body: Record<string, unknown>, fields: readonly string[]): number {
  for (const k of fields) if (typeof body[k] === 'number') return body[k];
  return UNCAPPED_OUTPUT;
}

/** What an honest upstream reports: [input, output]. */
export function honestTokens(call: RecordedCall, boundFields: readonly string[] = EVERY_BOUND): [number, number] {
  const body = call.body;
  const input = Math.ceil(JSON.stringify(body).length / 4) + HONEST_IMAGE_TOKENS * images(body.messages ?? body.input);
  if (call.path.endsWith('/embeddings')) return [input, 0];
  const n = typeof body.n === 'number' ? body.n : 1;
  return [input, cap(body, boundFields) * n];
}

export async function startUsageFake(): Promise<UsageFake> {
  const http = await startRecordingServer((call, res) => answer(fake, call, res));
  const fake: UsageFake = { url: http.url, baseUrl: `${http.url}/v1`, calls: http.calls, usageText: undefined, boundFields: EVERY_BOUND, close: http.close };
  return fake;
}

function answer(fake: UsageFake, call: RecordedCall, res: ServerResponse): void {
  const [input, output] = honestTokens(call, fake.boundFields);
  const model = JSON.stringify(String(call.body.model ?? 'unknown'));
  const scripted = fake.usageText;
  const usage = (honest: object): string => (scripted === 'absent' ? '' : `,"usage":${scripted ?? JSON.stringify(honest)}`);
  let text: string;
  if (call.path.endsWith('/v1/messages')) {
    text = `{"id":"msg_fake","type":"message","role":"assistant","model":${model},"content":[{"type":"text","text":"Hello."}],"stop_reason":"end_turn","stop_sequence":null${usage({ input_tokens: input, output_tokens: output })}}`;
  } else if (call.path.endsWith('/embeddings')) {
    const inputs = Array.isArray(call.body.input) ? call.body.input : [call.body.input];
    const data = inputs.map((_x, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] }));
    text = `{"object":"list","model":${model},"data":${JSON.stringify(data)}${usage({ prompt_tokens: input, total_tokens: input })}}`;
  } else if (call.path.endsWith('/responses')) {
    const out = [
      { type: 'message', id: 'msg_fake', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.', annotations: [] }] },
    ];
    text = `{"id":"resp_fake","object":"response","created_at":1700000000,"status":"completed","model":${model},"output":${JSON.stringify(out)}${usage({ input_tokens: input, output_tokens: output, total_tokens: input + output })}}`;
  } else if (call.body.stream === true) {
    // Chat streamed: one content chunk, the finish, then the usage chunk (forced by the gateway), as OpenAI streams.
    const head = `"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,"model":${model}`;
    const chunks = [
      `{${head},"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello."},"finish_reason":null}]}`,
      `{${head},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
      ...(scripted === 'absent' ? [] : [`{${head},"choices":[]${usage({ prompt_tokens: input, completion_tokens: output, total_tokens: input + output })}}`]),
    ];
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${chunks.map((c) => `data: ${c}\n\n`).join('')}data: [DONE]\n\n`);
    return;
  } else {
    const n = typeof call.body.n === 'number' ? call.body.n : 1;
    const choices = Array.from({ length: n }, (_x, index) => ({
      index,
      message: { role: 'assistant', content: 'Hello.', refusal: null },
      logprobs: null,
      finish_reason: 'length',
    }));
    text = `{"id":"chatcmpl-fake","object":"chat.completion","created":1700000000,"model":${model},"choices":${JSON.stringify(choices)}${usage({ prompt_tokens: input, completion_tokens: output, total_tokens: input + output })}}`;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(text);
}
