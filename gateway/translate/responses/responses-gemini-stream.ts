// Gemini stream -> Responses API events (through ResponsesEventWriter): the first chunk opens the response, text
// parts -> output text, each functionCall part (whole) -> a function_call item with its arguments in one delta, the
// chunk with finishReason (or a blocked prompt) -> response.completed or response.incomplete with the usage.
// Thought parts are not passed on (their tokens are in the usage as reasoning tokens).
import type { SseEvent } from '../../sse/parser.ts';
import { finishOf, geminiStreamError, readChunk } from '../gemini/gemini-answer.ts';
import { GeminiStreamUsage } from '../gemini/gemini-stream-usage.ts';
import { isObject, type Json } from '../json-read.ts';
import type { ToolNames } from './responses-chat-request.ts';
import { ResponsesEventWriter } from './responses-events.ts';
import { safeJson, type StreamErrorCode, type StreamTranslator, type Usage, type AnswerFacts } from '../types.ts';
import { Facts } from '../answer-facts.ts';

export class ResponsesFromGeminiStream implements StreamTranslator {
  /** The answer's id and finish reason in Gemini's own words, for the trace. */
  private readonly noted = new Facts();

  facts(): AnswerFacts {
    return this.noted.facts();
  }

  complete = false;
  failed = false;
  private readonly w: ResponsesEventWriter;
  private readonly seen = new GeminiStreamUsage();
  private calls = 0;

  constructor(client: Json, tools: ToolNames, model: string, createdAt: number) {
    this.w = new ResponsesEventWriter(client, tools, model, createdAt);
  }

  event(ev: SseEvent): string {
    const data = safeJson(ev.data);
    if (!isObject(data)) return '';
    const err = geminiStreamError(data);
    if (err) {
      this.complete = true;
      this.failed = true;
      return this.w.start(data.responseId) + this.w.error(err.message);
    }
    this.seen.chunk(data);
    let out = this.w.start(data.responseId);
    const c = readChunk(data, this.calls);
    this.noted.noteId(data.responseId);
    if (c.finish !== null) this.noted.noteReason(c.finish);
    this.seen.content(c.parts.length);
    for (const p of c.parts) {
      if (p.kind === 'text') out += this.w.textDelta(p.text);
      else {
        const key = this.calls++;
        out += this.w.callStart(key, p.id, p.name) + this.w.callArgs(key, JSON.stringify(p.args));
      }
    }
    if (c.finish !== null || c.blocked !== null) {
      this.complete = true;
      out += this.w.finish(finishOf(c.finish, c.blocked, this.calls > 0), this.usage());
    }
    return out;
  }

  finish(): string {
    return '';
  }

  usage(): Usage {
    return this.seen.usage();
  }

  error(message: string, code?: StreamErrorCode): string {
    return this.w.error(message, code);
  }
}
