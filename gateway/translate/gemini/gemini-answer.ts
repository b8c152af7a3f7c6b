// Reading a Gemini GenerateContentResponse (a whole answer, or one chunk of a stream): the first candidate's parts in
// order (text, and function calls with the ids of gemini-ids.ts), why it stopped, and a prompt Gemini blocked.
// Thought parts (`thought: true`, thought summaries) are not content: they are skipped, their tokens are in the
// usage as reasoning tokens. Other parts (inline data, executable code) are not requested by these translators.
import { callNonce, encodeCallId } from './gemini-ids.ts';
import { isObject, type Json } from '../json-read.ts';
import type { FinishReason } from '../stop-reasons.ts';

export type AnswerPart = { kind: 'text'; text: string } | { kind: 'call'; id: string; name: string; args: Json };

export interface Chunk {
  parts: AnswerPart[];
  /** Gemini's finishReason, when this chunk ends the candidate. */
  finish: string | null;
  /** promptFeedback.blockReason: the prompt was refused, no candidate follows. */
  blocked: string | null;
}

/** Reads one response; `callIndex` numbers the calls across the chunks of a stream. */
export function readChunk(r: Json, callIndex = 0): Chunk {
  const candidate = Array.isArray(r.candidates) && isObject(r.candidates[0]) ? r.candidates[0] : null;
  const content = candidate && isObject(candidate.content) ? candidate.content : {};
  const parts: AnswerPart[] = [];
  const nonce = callNonce(r.responseId);
  for (const p of Array.isArray(content.parts) ? content.parts.filter(isObject) : []) {
    if (p.thought === true) continue;
    if (typeof p.text === 'string') {
      if (p.text !== '') parts.push({ kind: 'text', text: p.text });
    } else if (isObject(p.functionCall)) {
      const fc = p.functionCall;
      const id = encodeCallId(nonce, callIndex++, fc.id);
      parts.push({ kind: 'call', id, name: String(fc.name ?? ''), args: isObject(fc.args) ? fc.args : {} });
    }
  }
  const feedback = isObject(r.promptFeedback) ? r.promptFeedback : {};
  const blocked = !candidate && typeof feedback.blockReason === 'string' ? feedback.blockReason : null;
  const finish = candidate && typeof candidate.finishReason === 'string' ? candidate.finishReason : null;
  return { parts, finish, blocked };
}

// Gemini's finish reasons that mean a filter stopped the answer (safety, recitation, blocklists, personal data).
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/**
 * Gemini finishReason -> OpenAI finish_reason: STOP -> stop (tool_calls when the answer holds calls), MAX_TOKENS ->
 * length, the filters -> content_filter; a blocked prompt -> content_filter. The others (LANGUAGE, OTHER,
 * MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS, ...) end the answer as it is: stop, or
 * tool_calls when it holds calls.
 */
export function finishOf(finish: string | null, blocked: string | null, hasCalls: boolean): FinishReason {
  if (blocked !== null) return 'content_filter';
  if (finish === 'MAX_TOKENS') return 'length';
  if (finish !== null && FILTERED.has(finish)) return 'content_filter';
  return hasCalls ? 'tool_calls' : 'stop';
}

/** A chat.completion id for a Gemini responseId. */
export function geminiCompletionId(responseId: unknown): string {
  const tail = typeof responseId === 'string' ? responseId.replace(/[^A-Za-z0-9_-]/g, '') : '';
  return `chatcmpl-${tail || Date.now().toString(36)}`;
}

/** The message and status name of an error object in a Gemini stream, if the event is one. */
export function geminiStreamError(data: Json): { message: string; status: string } | null {
  if (!isObject(data.error)) return null;
  const e = data.error;
  return {
    message: typeof e.message === 'string' ? e.message : 'The upstream failed mid-stream.',
    status: typeof e.status === 'string' ? e.status : 'api_error',
  };
}

/** An Anthropic message id (msg_…) for a Gemini responseId. */
export function geminiMessageId(responseId: unknown): string {
  const tail = typeof responseId === 'string' ? responseId.replace(/[^A-Za-z0-9_-]/g, '') : '';
  return `msg_${tail || Date.now().toString(36)}`;
}
