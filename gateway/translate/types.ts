// A translation binds one client dialect to one upstream protocol for one operation. It is built per request
// from the client's parsed body and never mutates it, so a retry on the next target re-runs it from scratch.
import type { CompiledModel, CompiledTarget } from '../contract/snapshot.ts';
import type { Dialect } from '../errors/catalog.ts';
import type { Operation, Protocol } from '../providers/types.ts';
import type { SseEvent } from '../sse/parser.ts';
import type { EncodedForm } from './multipart-encode.ts';

export interface Usage {
  /** All input tokens, cache reads and writes included (what the input price applies to). */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Output tokens spent reasoning (part of outputTokens), when the upstream reports them: echoed in Responses usage. */
  reasoningTokens?: number;
  /** Image calls: input tokens of the input images (an edit's, part of inputTokens), priced apart when the route says. */
  imageInputTokens?: number;
  /** Image calls: the size and quality the answer says it made (priced per image by them when the call left them open). */
  imageSize?: string;
  imageQuality?: string;
  /** Image calls: the images the answer returned (its data, or a stream's completed events), however the route is priced. */
  images?: number;
  /** The upstream reported no whole number of input (output) tokens: missing, negative, fractional, not a number. */
  inputMissing?: boolean;
  outputMissing?: boolean;
}

/** A token count as an upstream reported it: a whole non-negative number, or null when it is not one. */
export function tokenCount(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;
}

/**
 * What an answer says of itself, as the upstream wrote it (for the trace: gen_ai.response.id and
 * gen_ai.response.finish_reasons). Each translator records them from what it already reads; nothing is parsed for it.
 */
export interface AnswerFacts {
  id: string | null;
  /** One reason per choice, in the upstream's words (stop, end_turn, length, max_tokens, completed, ...). */
  finishReasons: string[];
}

export const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

export interface UpstreamRequest {
  operation: Operation;
  body: string;
  /** The body as bytes, when it was spliced on the client's (translate/raw-splice.ts): sent instead of `body`. */
  bytes?: Buffer;
  /** A multipart form's bytes, sent instead of `body` (an image edit), and its content type with the boundary. */
  form?: EncodedForm;
  /**
   * The body, made when it is sent instead of `body`: a JSON body that carries an upload inside it (an image edit's
   * images as base64 for the clouds), read from where the upload waits (memory or a temporary file) for this attempt.
   */
  load?: () => Promise<string>;
  stream: boolean;
  headers: Record<string, string>;
  /** A 2xx body the gateway answers itself, without calling the upstream (count_tokens on a protocol without one). */
  local?: string;
  /** Tools of the client's request left out of this one (hosted tools the upstream cannot run: hosted-tools.ts). */
  droppedTools?: readonly string[];
}

/** Why the gateway itself ended a stream with an error event. */
export type StreamErrorCode = 'upstream_stream_error' | 'shutting_down';

export interface StreamTranslator {
  /** Bytes to write to the client for one upstream event ('' to write nothing). */
  event(ev: SseEvent): string;
  /** True once the upstream signalled a proper end ([DONE], message_stop). */
  readonly complete: boolean;
  /** True when the upstream ended the stream with its own error event (already written through). */
  readonly failed: boolean;
  /** Bytes to write after a complete upstream stream (trailing events), if any. */
  finish(): string;
  /** Token usage seen so far. */
  usage(): Usage;
  /** The answer's id and finish reasons seen so far. */
  facts(): AnswerFacts;
  /**
   * An explicit error event in the client's dialect: a cut stream never ends cleanly. `code` says why: the upstream
   * failed (the default) or the gateway is shutting down and ended the call.
   */
  error(message: string, code?: StreamErrorCode): string;
}

export interface Translation {
  readonly dialect: Dialect;
  readonly protocol: Protocol;
  /** The upstream request for one target of one model (the model's maxOutputTokens fills a missing max_tokens). */
  request(target: CompiledTarget, model: CompiledModel): UpstreamRequest;
  /**
   * A 2xx non-streaming upstream body to the client's body (model set to the served model) and its usage; `facts`
   * when the translation parsed the answer anyway (a pass-through does not: answerFacts() reads them when traced).
   */
  response(upstreamBody: string, servedModel: string): { body: string; usage: Usage; facts?: AnswerFacts };
  /** A pass-through's facts of a whole answer it did not parse (scanned, only when the call is traced). */
  factsOf?(body: string): AnswerFacts;
  /** `watch`: the call is traced, so a pass-through also notes the answer's facts (translators note them anyway). */
  stream(servedModel: string, watch?: boolean): StreamTranslator;
  /** The message of an upstream error body, safe to show the client. */
  errorMessage(upstreamBody: string, status: number): string;
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Set on a client's parsed body whose text was changed after parsing (a guardrail's mask): its raw bytes no longer
 * say what is sent, so nothing is spliced on them (raw-splice.ts).
 */
export const BODY_CHANGED: unique symbol = Symbol('svc.bodyChanged');
