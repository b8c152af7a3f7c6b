// Anthropic client -> Anthropic upstream (messages and count_tokens): pass-through apart from the model name and
// our own metadata.task_type; anthropic-version and anthropic-beta go along. Usage is read from the answer, or
// from message_start and message_delta on streams.
import type { CompiledTarget } from '../../contract/snapshot.ts';
import type { SseEvent } from '../../sse/parser.ts';
import { Facts, scanFacts } from '../answer-facts.ts';
import { rawEvent } from './anthropic-sse.ts';
import { sendHeldBound } from '../held-bound.ts';
import { anthropicErrorMessage, AnthropicStreamUsage, fromAnthropicUsage, type AnthropicUsage } from './anthropic-usage.ts';
import { isObject, parseUpstream, type Json } from '../json-read.ts';
import { rewriteModel, usageOf } from '../json-splice.ts';
import { anthropicStreamError } from '../stream-errors.ts';
import {
  NO_USAGE,
  safeJson,
  type AnswerFacts,
  type StreamErrorCode,
  type StreamTranslator,
  type Translation,
  type UpstreamRequest,
  type Usage,
} from '../types.ts';

/** The protocol headers of the client's request that an Anthropic upstream should see. */
export interface AnthropicHeaders {
  version?: string;
  beta?: string;
}

export function forwardedHeaders(h: AnthropicHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  if (h.version) out['anthropic-version'] = h.version;
  if (h.beta) out['anthropic-beta'] = h.beta;
  return out;
}

/** count_tokens takes no metadata (and counts none): only the fields that make up the prompt go. */
function countTokensBody(client: Json, upstreamModel: string): Json {
  const { metadata: _m, max_tokens: _t, stream: _s, ...rest } = client;
  return { ...rest, model: upstreamModel };
}

/** The client's body for the upstream: model replaced, task_type (ours) removed, everything else as sent. */
export function upstreamMessagesBody(client: Json, upstreamModel: string): Json {
  const out: Json = { ...client, model: upstreamModel };
  if (isObject(client.metadata)) {
    const { task_type: _t, ...rest } = client.metadata;
    if (Object.keys(rest).length > 0) out.metadata = rest;
    else delete out.metadata;
  }
  return out;
}

class AnthropicPassThroughStream implements StreamTranslator {
  complete = false;
  failed = false;
  private readonly seen = new AnthropicStreamUsage();
  private readonly noted = new Facts();
  private readonly model: string;

  constructor(model: string) {
    this.model = model;
  }

  event(ev: SseEvent): string {
    switch (ev.event) {
      case 'message_start': {
        const data = safeJson(ev.data) as { message?: Json & { usage?: AnthropicUsage } } | undefined;
        if (!data?.message) return rawEvent(ev);
        this.seen.start(data.message.usage);
        this.noted.noteId(data.message.id);
        return rawEvent({ event: ev.event, data: JSON.stringify({ ...data, message: { ...data.message, model: this.model } }) });
      }
      case 'message_delta': {
        const data = safeJson(ev.data) as { usage?: AnthropicUsage; delta?: { stop_reason?: unknown } } | undefined;
        this.seen.end(data?.usage);
        this.noted.noteReason(data?.delta?.stop_reason);
        return rawEvent(ev);
      }
      case 'content_block_delta': {
        this.seen.delta();
        return rawEvent(ev);
      }
      case 'message_stop':
        this.complete = true;
        return rawEvent(ev);
      case 'error':
        this.complete = true;
        this.failed = true;
        return rawEvent(ev);
      default:
        return rawEvent(ev);
    }
  }

  finish(): string {
    return '';
  }

  usage(): Usage {
    return this.seen.usage();
  }

  facts(): AnswerFacts {
    return this.noted.facts();
  }

  error(message: string, code?: StreamErrorCode): string {
    return anthropicStreamError(message, code);
  }
}

export function anthropicMessagesPassThrough(client: Json, headers: AnthropicHeaders): Translation {
  return {
    dialect: 'anthropic',
    protocol: 'anthropic',
    request(target: CompiledTarget): UpstreamRequest {
      const body = upstreamMessagesBody(client, target.upstreamModel);
      // max_tokens is the bound the hold assumed; any other bound field sent along carries it too (held-bound.ts).
      if (typeof client.max_tokens === 'number') sendHeldBound(body, client.max_tokens);
      return { operation: 'messages', body: JSON.stringify(body), stream: client.stream === true, headers: forwardedHeaders(headers) };
    },
    response(upstreamBody: string, servedModel: string) {
      // Every message answer carries usage: without one, the full parse says whether the body is an object at all.
      const usage = usageOf<AnthropicUsage>(upstreamBody) ?? (parseUpstream(upstreamBody).usage as AnthropicUsage | undefined);
      return { body: rewriteModel(upstreamBody, servedModel), usage: fromAnthropicUsage(usage) };
    },
    factsOf: (body: string) => scanFacts(body, 'stop_reason'),
    stream: (servedModel: string) => new AnthropicPassThroughStream(servedModel),
    errorMessage: anthropicErrorMessage,
  };
}

/** count_tokens is free: the answer passes through and no usage is charged. */
export function anthropicCountTokensPassThrough(client: Json, headers: AnthropicHeaders): Translation {
  return {
    dialect: 'anthropic',
    protocol: 'anthropic',
    request(target: CompiledTarget): UpstreamRequest {
      const body = countTokensBody(client, target.upstreamModel);
      return { operation: 'count_tokens', body: JSON.stringify(body), stream: false, headers: forwardedHeaders(headers) };
    },
    response: (upstreamBody: string) => ({ body: upstreamBody, usage: NO_USAGE }),
    stream(): StreamTranslator {
      throw new Error('count_tokens does not stream');
    },
    errorMessage: anthropicErrorMessage,
  };
}
