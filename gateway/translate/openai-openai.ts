// OpenAI client -> OpenAI-protocol upstream (chat and embeddings): pass-through apart from the model name,
// forced usage on streams, and metadata the upstream would reject.
import type { CompiledTarget } from '../contract/snapshot.ts';
import type { SseEvent } from '../sse/parser.ts';
import { fromOpenAIUsage, openAIErrorMessage } from './openai-usage.ts';
import { openAIStreamError } from './stream-errors.ts';
import { NO_USAGE, safeJson, type StreamErrorCode, type StreamTranslator, type Translation, type UpstreamRequest, type Usage } from './types.ts';

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

const MODEL_FIELD = /(?<!\\)"model"\s*:\s*"(?:[^"\\]|\\.)*"/;

const MODEL_KEY = '"model":"';

/**
 * Sets the top-level model of a serialized OpenAI object without re-serializing it. Runs on every chunk of a
 * stream, so the usual compact form is found with indexOf (and left alone when it already names the model); other
 * layouts (spaces, escapes) take the regular expression.
 */
export function rewriteModel(json: string, model: string): string {
  const at = json.indexOf(MODEL_KEY);
  if (at > 0 && json.charCodeAt(at - 1) !== 92) {
    const from = at + MODEL_KEY.length;
    const end = json.indexOf('"', from);
    let plain = end !== -1;
    for (let i = from; plain && i < end; i++) if (json.charCodeAt(i) === 92) plain = false;
    if (plain) {
      if (end - from === model.length && json.startsWith(model, from)) return json;
      return `${json.slice(0, at)}"model":${JSON.stringify(model)}${json.slice(end + 1)}`;
    }
  }
  return json.replace(MODEL_FIELD, () => `"model":${JSON.stringify(model)}`);
}

type OpenAIUsage = Parameters<typeof fromOpenAIUsage>[0];

/** The end of the JSON object that opens at `start`, or -1 (strings and escapes skipped). */
function objectEnd(json: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123) depth++;
    else if (c === 125 && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * The top-level usage of a serialized OpenAI answer, read by parsing that object alone: the body passes
 * through as the upstream sent it and is never parsed whole just to read usage. OpenAI writes usage after
 * choices, and no quoted key can occur unescaped inside a string, so the last "usage": is the top-level one;
 * any other layout falls back to a full parse.
 */
export function usageOf(json: string): OpenAIUsage | undefined {
  const at = json.lastIndexOf('"usage":');
  if (at !== -1) {
    let i = at + 8;
    while (json.charCodeAt(i) === 32) i++;
    if (json.startsWith('null', i)) return undefined;
    const end = json.charCodeAt(i) === 123 ? objectEnd(json, i) : -1;
    const u = end === -1 ? undefined : safeJson(json.slice(i, end));
    if (u && typeof u === 'object') return u as OpenAIUsage;
  }
  return (safeJson(json) as { usage?: OpenAIUsage } | undefined)?.usage;
}

class OpenAIPassThroughStream implements StreamTranslator {
  complete = false;
  failed = false;
  private seen: Usage = NO_USAGE;
  private readonly model: string;
  private readonly clientWantsUsage: boolean;

  constructor(model: string, clientWantsUsage: boolean) {
    this.model = model;
    this.clientWantsUsage = clientWantsUsage;
  }

  event(ev: SseEvent): string {
    const data = ev.data;
    if (data === '[DONE]') {
      this.complete = true;
      return 'data: [DONE]\n\n';
    }
    // Only the chunk that carries usage is parsed; the others are passed on with the model name set.
    if (data.includes('"usage":{')) {
      const chunk = safeJson(data) as { usage?: Parameters<typeof fromOpenAIUsage>[0]; choices?: unknown[] } | undefined;
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

  finish(): string {
    return '';
  }

  usage(): Usage {
    return this.seen;
  }

  error(message: string, code?: StreamErrorCode): string {
    return openAIStreamError(message, code);
  }
}

export function openAIChatPassThrough(client: Body): Translation {
  const wantsUsage = (client.stream_options as Body | undefined)?.include_usage === true;
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget): UpstreamRequest {
      const body = upstreamChatBody(client, target.upstreamModel);
      return { operation: 'chat', body: JSON.stringify(body), stream: client.stream === true, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      return { body: rewriteModel(upstreamBody, servedModel), usage: fromOpenAIUsage(usageOf(upstreamBody)) };
    },
    stream: (servedModel: string) => new OpenAIPassThroughStream(servedModel, wantsUsage),
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
      return { body: rewriteModel(upstreamBody, servedModel), usage: fromOpenAIUsage(usageOf(upstreamBody)) };
    },
    stream(): StreamTranslator {
      throw new Error('embeddings do not stream');
    },
    errorMessage: openAIErrorMessage,
  };
}
