// Gemini stream (alt=sse: each `data:` a GenerateContentResponse with the next parts) -> OpenAI chat.completion.chunk
// stream: the first chunk opens the assistant turn (role), text parts -> delta.content, each functionCall part (Gemini
// sends it whole) -> one delta.tool_calls entry with id, name and all its arguments, the chunk with finishReason (or a
// blocked prompt) -> the finish chunk, the usage chunk (when the client asked for it) and [DONE]. Thought parts are
// not passed on. An error object in the stream ends it as failed, with an OpenAI error chunk.
import type { SseEvent } from '../../sse/parser.ts';
import { finishOf, geminiCompletionId, geminiStreamError, readChunk } from '../gemini/gemini-answer.ts';
import { GeminiStreamUsage } from '../gemini/gemini-stream-usage.ts';
import { isObject, type Json } from '../json-read.ts';
import { toOpenAIUsage } from './openai-usage.ts';
import { openAIStreamError } from '../stream-errors.ts';
import { safeJson, type StreamErrorCode, type StreamTranslator, type Usage, type AnswerFacts } from '../types.ts';
import { Facts } from '../answer-facts.ts';

export class OpenAIFromGeminiStream implements StreamTranslator {
  /** The answer's id and finish reason in Gemini's own words, for the trace. */
  private readonly noted = new Facts();

  facts(): AnswerFacts {
    return this.noted.facts();
  }

  complete = false;
  failed = false;
  private readonly model: string;
  private readonly wantsUsage: boolean;
  private readonly created: number;
  private id = '';
  private calls = 0;
  private readonly seen = new GeminiStreamUsage();

  constructor(model: string, wantsUsage: boolean, created: number) {
    this.model = model;
    this.wantsUsage = wantsUsage;
    this.created = created;
  }

  private chunk(choices: Json[], extra: Json = {}): string {
    const usage = this.wantsUsage ? { usage: null } : {};
    const body = { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices, ...usage, ...extra };
    return `data: ${JSON.stringify(body)}\n\n`;
  }

  private delta(delta: Json, finish: string | null = null): string {
    return this.chunk([{ index: 0, delta, logprobs: null, finish_reason: finish }]);
  }

  private start(r: Json): string {
    if (this.id !== '') return '';
    this.id = geminiCompletionId(r.responseId);
    return this.delta({ role: 'assistant', content: '' });
  }

  event(ev: SseEvent): string {
    const data = safeJson(ev.data);
    if (!isObject(data)) return '';
    const err = geminiStreamError(data);
    if (err) {
      this.complete = true;
      this.failed = true;
      return `data: ${JSON.stringify({ error: { message: err.message, type: err.status, param: null, code: 'upstream_stream_error' } })}\n\n`;
    }
    let out = this.start(data);
    const c = readChunk(data, this.calls);
    this.noted.noteId(data.responseId);
    if (c.finish !== null) this.noted.noteReason(c.finish);
    this.seen.chunk(data);
    this.seen.content(c.parts.length);
    for (const p of c.parts) {
      if (p.kind === 'text') out += this.delta({ content: p.text });
      else {
        out += this.delta({ tool_calls: [{ index: this.calls++, id: p.id, type: 'function', function: { name: p.name, arguments: JSON.stringify(p.args) } }] });
      }
    }
    if (c.finish !== null || c.blocked !== null) {
      this.complete = true;
      out += this.delta({}, finishOf(c.finish, c.blocked, this.calls > 0));
      if (this.wantsUsage) out += this.chunk([], { usage: toOpenAIUsage(this.usage()) });
      out += 'data: [DONE]\n\n';
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
    return openAIStreamError(message, code);
  }
}
