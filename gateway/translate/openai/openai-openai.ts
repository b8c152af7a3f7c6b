// OpenAI client -> OpenAI-protocol upstream (chat and embeddings): pass-through apart from the model name,
// forced usage on streams, and metadata the upstream would reject.
import { SPLICE_MIN_BYTES, spliceTopLevel } from '../raw-splice.ts';
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import type { SseEvent } from '../../sse/parser.ts';
import { Facts, scanFacts } from '../answer-facts.ts';
import { maxTokensOf } from '../chat-request.ts';
import { sendHeldBound } from '../held-bound.ts';
import { rewriteModel, usageOf } from '../json-splice.ts';
import { fromOpenAIUsage, openAIErrorMessage } from './openai-usage.ts';
import { openAIStreamError } from '../stream-errors.ts';
import {
  BODY_CHANGED,
  NO_USAGE,
  safeJson,
  type AnswerFacts,
  type StreamErrorCode,
  type StreamTranslator,
  type Translation,
  type UpstreamRequest,
  type Usage,
} from '../types.ts';

type Body = Record<string, unknown>;

/** The client's body for the upstream: model replaced, task_type (ours) removed, usage forced on streams. */
export function upstreamChatBody(client: Body, upstreamModel: string): Body {
  const out: Body = { ...client, model: upstreamModel };
  const meta = client.metadata as Record<string, unknown> | undefined;
  if (meta && typeof meta === 'object') {
    const { task_type: _t, ...rest } = meta;
    // OpenAI accepts metadata only with store: true; other OpenAI-compatible vendors reject it outright.
    if (Object.keys(rest).length > 0 && client.store === true) out.metadata = rest;
    else delete out.metadata;
  }
  if (client.stream === true) {
    out.stream_options = { ...(client.stream_options as Body | undefined), include_usage: true };
  }
  return out;
}

type OpenAIUsage = Parameters<typeof fromOpenAIUsage>[0];

/** Chat Completions and legacy completions chunks alike: passed on with the model set, usage read. */
export class OpenAIPassThroughStream implements StreamTranslator {
  complete = false;
  failed = false;
  private seen: Usage = NO_USAGE;
  private readonly model: string;
  private readonly clientWantsUsage: boolean;
  /** Traced: the chunks that carry a finish reason are read too (the others never are). */
  private readonly noted: Facts | null;

  constructor(model: string, clientWantsUsage: boolean, watch: boolean) {
    this.model = model;
    this.clientWantsUsage = clientWantsUsage;
    this.noted = watch ? new Facts() : null;
  }

  event(ev: SseEvent): string {
    const data = ev.data;
    if (data === '[DONE]') {
      this.complete = true;
      return 'data: [DONE]\n\n';
    }
    if (this.noted && data.includes('"finish_reason":"')) this.note(data);
    // Only the chunk that carries usage is parsed; the others are passed on with the model name set.
    if (data.includes('"usage":{')) {
      const chunk = safeJson(data) as { usage?: OpenAIUsage; choices?: unknown[] } | undefined;
      if (chunk?.usage) this.seen = fromOpenAIUsage(chunk.usage);
      if (!this.clientWantsUsage && Array.isArray(chunk?.choices) && chunk.choices.length === 0) return '';
    }
    if (data.includes('"error"') && !data.includes('"choices"')) {
      // An error event from the upstream: pass it on as the explicit end of the stream.
      this.complete = true;
      this.failed = true;
      return `data: ${data}\n\n`;
    }
    return `data: ${rewriteModel(data, this.model)}\n\n`;
  }

  private note(data: string): void {
    const chunk = safeJson(data) as { id?: unknown; choices?: Array<{ index?: unknown; finish_reason?: unknown }> } | undefined;
    this.noted?.noteId(chunk?.id);
    if (Array.isArray(chunk?.choices)) for (const c of chunk.choices) this.noted?.noteReason(c?.finish_reason, typeof c?.index === 'number' ? c.index : 0);
  }

  finish(): string {
    return '';
  }

  usage(): Usage {
    return this.seen;
  }

  facts(): AnswerFacts {
    return this.noted ? this.noted.facts() : { id: null, finishReasons: [] };
  }

  error(message: string, code?: StreamErrorCode): string {
    return openAIStreamError(message, code);
  }
}

/**
 * The upstream body: a large one spliced on the client's raw bytes (raw-splice.ts: the prompt copied, not
 * serialized again), the same JSON value as serializing `body`, which a small one still is.
 */
function serialized(client: Body, body: Body, raw: Buffer | undefined): string | Buffer {
  if (raw && raw.length >= SPLICE_MIN_BYTES && !(BODY_CHANGED in client)) {
    const edits = new Map<string, unknown>();
    for (const k of Object.keys(body)) if (!Object.hasOwn(client, k) || body[k] !== client[k]) edits.set(k, body[k]);
    for (const k of Object.keys(client)) if (!Object.hasOwn(body, k)) edits.set(k, undefined);
    const bytes = spliceTopLevel(raw, edits);
    if (bytes) return bytes;
  }
  return JSON.stringify(body);
}

/** `raw`: the client's body as received, when the route kept it (large prompts are spliced on it). */
export function openAIChatPassThrough(client: Body, raw?: Buffer): Translation {
  const wantsUsage = (client.stream_options as Body | undefined)?.include_usage === true;
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      const body = upstreamChatBody(client, target.upstreamModel);
      // The output cap the hold assumed goes upstream, in every bound field the client sent (held-bound.ts), and
      // as max_completion_tokens when it sent none: without it an upstream may answer at length (estimate.ts).
      const held = maxTokensOf(client, model);
      sendHeldBound(body, held);
      if (!('max_completion_tokens' in body) && !('max_tokens' in body)) body.max_completion_tokens = held;
      const out = serialized(client, body, raw);
      const stream = client.stream === true;
      if (typeof out === 'string') return { operation: 'chat', body: out, stream, headers: {} };
      // Spliced: the bytes are sent; the text is made only if something reads it.
      return {
        operation: 'chat',
        bytes: out,
        get body() {
          return out.toString('utf8');
        },
        stream,
        headers: {},
      };
    },
    response(upstreamBody: string, servedModel: string) {
      return { body: rewriteModel(upstreamBody, servedModel), usage: fromOpenAIUsage(usageOf<OpenAIUsage>(upstreamBody)) };
    },
    factsOf: (body: string) => scanFacts(body, 'finish_reason'),
    stream: (servedModel: string, watch?: boolean) => new OpenAIPassThroughStream(servedModel, wantsUsage, watch === true),
    errorMessage: openAIErrorMessage,
  };
}

export function openAIEmbeddingsPassThrough(client: Body): Translation {
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget): UpstreamRequest {
      const { metadata: _m, ...rest } = client;
      return { operation: 'embeddings', body: JSON.stringify({ ...rest, model: target.upstreamModel }), stream: false, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      return { body: rewriteModel(upstreamBody, servedModel), usage: fromOpenAIUsage(usageOf<OpenAIUsage>(upstreamBody)) };
    },
    stream(): StreamTranslator {
      throw new Error('embeddings do not stream');
    },
    errorMessage: openAIErrorMessage,
  };
}
