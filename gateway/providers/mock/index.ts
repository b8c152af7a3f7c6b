// Built-in mock provider: speaks the OpenAI protocol in process, deterministic, with optional latency. `n` gives n
// choices (the same reply each), billed as n replies, as OpenAI does.
import { setTimeout as sleep } from 'node:timers/promises';
import { bodyText, type AudioOutcome, type AudioUpstreamCall, type Provider, type UpstreamCall, type UpstreamOutcome } from '../types.ts';
import { mockAudio } from './audio.ts';
import { mockEmbedding, mockReply, mockTokens, promptText } from './reply.ts';
import { mockCompletions, mockModerations, mockRerank } from './text.ts';
import { mockEditRequest, mockImages } from './image.ts';
import { formBytes } from '../../translate/multipart-encode.ts';

interface ChatBody {
  model: string;
  messages: unknown;
  max_tokens?: number;
  max_completion_tokens?: number;
  n?: number | null;
  stream_options?: { include_usage?: boolean };
}

interface EmbeddingsBody {
  model: string;
  input: string | string[];
  dimensions?: number;
}

export class MockProvider implements Provider {
  readonly protocol = 'openai' as const;

  async send(call: UpstreamCall): Promise<UpstreamOutcome> {
    const mock = call.target.mock ?? { latencyMs: 0, chunkDelayMs: 0 };
    if (mock.latencyMs > 0) await sleep(mock.latencyMs, undefined, { signal: call.signal });
    switch (call.operation) {
      case 'chat':
        return this.chat(JSON.parse(bodyText(call.body)) as ChatBody, call, mock.chunkDelayMs);
      case 'embeddings':
        return { kind: 'json', status: 200, body: JSON.stringify(embeddings(JSON.parse(bodyText(call.body)) as EmbeddingsBody)) };
      case 'completions':
        return mockCompletions(JSON.parse(bodyText(call.body)) as Parameters<typeof mockCompletions>[0], call.stream, mock.chunkDelayMs, call.signal);
      case 'rerank':
        return mockRerank(JSON.parse(bodyText(call.body)) as Parameters<typeof mockRerank>[0]);
      case 'moderations':
        return mockModerations(JSON.parse(bodyText(call.body)) as Parameters<typeof mockModerations>[0]);
      case 'images': {
        const b = JSON.parse(bodyText(call.body)) as Record<string, unknown>;
        const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
        const req = {
          prompt: String(b.prompt ?? ''),
          n: typeof b.n === 'number' ? b.n : 1,
          size: str(b.size),
          quality: str(b.quality),
          responseFormat: str(b.response_format),
          stream: b.stream === true,
          partialImages: typeof b.partial_images === 'number' ? b.partial_images : 0,
          inputImages: 0,
        };
        return mockImages(req, false);
      }
      case 'image_edits':
        return mockImages(mockEditRequest(call.form ? await formBytes(call.form) : new Uint8Array()), true);
      default:
        return {
          kind: 'error',
          status: 404,
          body: '{"error":{"message":"mock serves chat, embeddings, completions, rerank, moderations and images"}}',
          retryAfter: undefined,
        };
    }
  }

  async audio(call: AudioUpstreamCall): Promise<AudioOutcome> {
    const mock = call.target.mock ?? { latencyMs: 0, chunkDelayMs: 0 };
    if (mock.latencyMs > 0) await sleep(mock.latencyMs, undefined, { signal: call.signal });
    return mockAudio(call, mock.chunkDelayMs);
  }

  private chat(body: ChatBody, call: UpstreamCall, delayMs: number): UpstreamOutcome {
    const id = `chatcmpl-mock-${Date.now().toString(36)}`;
    const created = Math.floor(Date.now() / 1000);
    const { pieces, truncated } = mockReply(body.model, body.messages, body.max_completion_tokens ?? body.max_tokens);
    const n = typeof body.n === 'number' && body.n > 1 ? body.n : 1;
    const usage = { prompt_tokens: mockTokens(promptText(body.messages)), completion_tokens: pieces.length * n, total_tokens: 0 };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const finish = truncated ? 'length' : 'stop';
    if (!call.stream) {
      const message = { role: 'assistant', content: pieces.join(''), refusal: null };
      const choices = Array.from({ length: n }, (_, index) => ({ index, message, logprobs: null, finish_reason: finish }));
      const out = { id, object: 'chat.completion', created, model: body.model, choices, usage };
      return { kind: 'json', status: 200, body: JSON.stringify(out) };
    }
    const withUsage = body.stream_options?.include_usage === true;
    return {
      kind: 'stream',
      status: 200,
      body: chunks({ id, created, model: body.model, pieces, n, finish, usage: withUsage ? usage : null, delayMs, signal: call.signal }),
    };
  }

  async close(): Promise<void> {}
}

async function* chunks(o: {
  id: string;
  created: number;
  model: string;
  pieces: string[];
  n: number;
  finish: string;
  usage: object | null;
  delayMs: number;
  signal: AbortSignal;
}): AsyncGenerator<string> {
  const base = { id: o.id, object: 'chat.completion.chunk', created: o.created, model: o.model };
  const u = o.usage ? { usage: null } : {};
  const frame = (choices: object[], extra: object = u): string => `data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`;
  const each = (delta: object, finish: string | null): object[] =>
    Array.from({ length: o.n }, (_, index) => ({ index, delta, logprobs: null, finish_reason: finish }));
  yield frame(each({ role: 'assistant', content: '' }, null));
  for (const p of o.pieces) {
    if (o.delayMs > 0) await sleep(o.delayMs, undefined, { signal: o.signal });
    yield frame(each({ content: p }, null));
  }
  yield frame(each({}, o.finish));
  if (o.usage) yield frame([], { usage: o.usage });
  yield 'data: [DONE]\n\n';
}

function embeddings(body: EmbeddingsBody): object {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const dims = body.dimensions ?? 16;
  const tokens = inputs.reduce((s, t) => s + mockTokens(String(t)), 0);
  return {
    object: 'list',
    data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: mockEmbedding(String(t), dims) })),
    model: body.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
