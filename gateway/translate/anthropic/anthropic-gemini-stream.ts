// Gemini stream (alt=sse: each `data:` a GenerateContentResponse with the next parts) -> Anthropic event stream:
// message_start and ping on the first chunk, one text block per run of text (content_block_start / text_delta /
// content_block_stop), one tool_use block per functionCall part (Gemini sends it whole: its input in one
// input_json_delta), and on the chunk with finishReason (or a blocked prompt) message_delta (stop reason and usage)
// and message_stop. Thought parts are not passed on. An error object in the stream ends it with an error event.
import type { SseEvent } from '../../sse/parser.ts';
import { anthropicErrorEvent, anthropicEvent } from './anthropic-sse.ts';
import { toAnthropicUsage } from './anthropic-usage.ts';
import { finishOf, geminiMessageId, geminiStreamError, readChunk } from '../gemini/gemini-answer.ts';
import { GeminiStreamUsage } from '../gemini/gemini-stream-usage.ts';
import { isObject, type Json } from '../json-read.ts';
import { stopReasonOf } from '../stop-reasons.ts';
import { anthropicStreamError } from '../stream-errors.ts';
import { safeJson, type StreamErrorCode, type StreamTranslator, type Usage, type AnswerFacts } from '../types.ts';
import { Facts } from '../answer-facts.ts';

export class AnthropicFromGeminiStream implements StreamTranslator {
  /** The answer's id and finish reason in Gemini's own words, for the trace. */
  private readonly noted = new Facts();

  facts(): AnswerFacts {
    return this.noted.facts();
  }

  complete = false;
  failed = false;
  private readonly model: string;
  private started = false;
  /** Index of the open text block, if one is open. */
  private openText: number | null = null;
  private blocks = 0;
  private calls = 0;
  private readonly seen = new GeminiStreamUsage();

  constructor(model: string) {
    this.model = model;
  }

  event(ev: SseEvent): string {
    const data = safeJson(ev.data);
    if (!isObject(data)) return '';
    const err = geminiStreamError(data);
    if (err) {
      this.complete = true;
      this.failed = true;
      return this.start(data) + anthropicErrorEvent(err.message);
    }
    this.seen.chunk(data);
    let out = this.start(data);
    const c = readChunk(data, this.calls);
    this.noted.noteId(data.responseId);
    if (c.finish !== null) this.noted.noteReason(c.finish);
    this.seen.content(c.parts.length);
    for (const p of c.parts) {
      if (p.kind === 'text') out += this.text(p.text);
      else {
        out += this.closeText();
        const index = this.blocks++;
        this.calls++;
        out +=
          anthropicEvent('content_block_start', {
            type: 'content_block_start',
            index,
            content_block: { type: 'tool_use', id: p.id, name: p.name, input: {} },
          }) +
          anthropicEvent('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: JSON.stringify(p.args) },
          }) +
          anthropicEvent('content_block_stop', { type: 'content_block_stop', index });
      }
    }
    if (c.finish !== null || c.blocked !== null) out += this.end(stopReasonOf(finishOf(c.finish, c.blocked, this.calls > 0)));
    return out;
  }

  private start(r: Json): string {
    if (this.started) return '';
    this.started = true;
    const usage = toAnthropicUsage({ ...this.seen.usage(), outputTokens: 0 });
    const message = {
      id: geminiMessageId(r.responseId),
      type: 'message',
      role: 'assistant',
      model: this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    };
    return anthropicEvent('message_start', { type: 'message_start', message }) + anthropicEvent('ping', { type: 'ping' });
  }

  private text(text: string): string {
    let out = '';
    if (this.openText === null) {
      this.openText = this.blocks++;
      out += anthropicEvent('content_block_start', { type: 'content_block_start', index: this.openText, content_block: { type: 'text', text: '' } });
    }
    if (text === '') return out;
    return out + anthropicEvent('content_block_delta', { type: 'content_block_delta', index: this.openText, delta: { type: 'text_delta', text } });
  }

  private closeText(): string {
    if (this.openText === null) return '';
    const index = this.openText;
    this.openText = null;
    return anthropicEvent('content_block_stop', { type: 'content_block_stop', index });
  }

  private end(stop: string): string {
    this.complete = true;
    let out = this.blocks === 0 ? this.text('') : '';
    out += this.closeText();
    out += anthropicEvent('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: toAnthropicUsage(this.usage()) });
    return out + anthropicEvent('message_stop', { type: 'message_stop' });
  }

  finish(): string {
    return '';
  }

  usage(): Usage {
    return this.seen.usage();
  }

  error(message: string, code?: StreamErrorCode): string {
    return anthropicStreamError(message, code);
  }
}
