// OpenAI chat.completion.chunk stream -> Anthropic event stream: message_start, ping, one content block per
// text run or tool call (content_block_start / _delta / _stop; tool arguments as input_json_delta), then
// message_delta (stop reason and usage, which OpenAI sends last) and message_stop.
import type { SseEvent } from '../../sse/parser.ts';
import { anthropicErrorEvent, anthropicEvent } from './anthropic-sse.ts';
import { toAnthropicUsage } from './anthropic-usage.ts';
import { Facts } from '../answer-facts.ts';
import { messageId } from '../ids.ts';
import { isObject, type Json } from '../json-read.ts';
import { fromOpenAIUsage } from '../openai/openai-usage.ts';
import { stopReasonOf, type StopReason } from '../stop-reasons.ts';
import { anthropicStreamError } from '../stream-errors.ts';
import { NO_USAGE, safeJson, type AnswerFacts, type StreamErrorCode, type StreamTranslator, type Usage } from '../types.ts';

type Open = { kind: 'text'; index: number } | { kind: 'tool'; index: number; tool: number } | null;

export class AnthropicFromOpenAIStream implements StreamTranslator {
  complete = false;
  failed = false;
  private readonly model: string;
  private started = false;
  private open: Open = null;
  private blocks = 0;
  /** Anthropic block index of each OpenAI tool-call index. */
  private readonly tools = new Map<number, number>();
  private stop: StopReason | null = null;
  private seen: Usage = NO_USAGE;
  private readonly noted = new Facts();

  constructor(model: string) {
    this.model = model;
  }

  event(ev: SseEvent): string {
    if (ev.data === '[DONE]') return this.end();
    const chunk = safeJson(ev.data);
    if (!isObject(chunk)) return '';
    if (isObject(chunk.error) && !('choices' in chunk)) {
      this.complete = true;
      this.failed = true;
      const message = typeof chunk.error.message === 'string' ? chunk.error.message : 'The upstream failed mid-stream.';
      return this.start(chunk) + anthropicErrorEvent(message);
    }
    let out = this.start(chunk);
    if (isObject(chunk.usage)) this.seen = fromOpenAIUsage(chunk.usage as Parameters<typeof fromOpenAIUsage>[0]);
    const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : null;
    if (!choice) return out;
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string' && delta.content !== '') out += this.text(delta.content);
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((c, i) => {
        if (isObject(c)) out += this.toolDelta(c, i);
      });
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      this.noted.noteReason(choice.finish_reason, typeof choice.index === 'number' ? choice.index : 0);
      this.stop = stopReasonOf(choice.finish_reason);
      out += this.close();
    }
    return out;
  }

  private start(chunk: Json): string {
    if (this.started) return '';
    this.started = true;
    this.noted.noteId(chunk.id);
    const message = {
      id: messageId(chunk.id),
      type: 'message',
      role: 'assistant',
      model: this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: toAnthropicUsage(NO_USAGE),
    };
    return anthropicEvent('message_start', { type: 'message_start', message }) + anthropicEvent('ping', { type: 'ping' });
  }

  private text(text: string): string {
    let out = '';
    if (this.open?.kind !== 'text') {
      out += this.close();
      this.open = { kind: 'text', index: this.blocks++ };
      out += anthropicEvent('content_block_start', { type: 'content_block_start', index: this.open.index, content_block: { type: 'text', text: '' } });
    }
    if (text === '') return out;
    return out + anthropicEvent('content_block_delta', { type: 'content_block_delta', index: this.open.index, delta: { type: 'text_delta', text } });
  }

  private toolDelta(c: Json, position: number): string {
    const tool = typeof c.index === 'number' ? c.index : position;
    const fn = isObject(c.function) ? c.function : {};
    let out = '';
    let index = this.tools.get(tool);
    if (index === undefined) {
      out += this.close();
      index = this.blocks++;
      this.tools.set(tool, index);
      this.open = { kind: 'tool', index, tool };
      const block = { type: 'tool_use', id: String(c.id ?? `toolu_${index}`), name: String(fn.name ?? ''), input: {} };
      out += anthropicEvent('content_block_start', { type: 'content_block_start', index, content_block: block });
    }
    // A fragment for a block already closed (interleaved calls, rare) still goes to its own index.
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      out += anthropicEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: fn.arguments } });
    }
    return out;
  }

  private close(): string {
    if (!this.open) return '';
    const index = this.open.index;
    this.open = null;
    return anthropicEvent('content_block_stop', { type: 'content_block_stop', index });
  }

  private end(): string {
    this.complete = true;
    let out = this.start({});
    if (this.blocks === 0) out += this.text('');
    out += this.close();
    out += anthropicEvent('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: this.stop ?? 'end_turn', stop_sequence: null },
      usage: toAnthropicUsage(this.seen),
    });
    return out + anthropicEvent('message_stop', { type: 'message_stop' });
  }

  finish(): string {
    return '';
  }

  usage(): Usage {
    return this.seen;
  }

  facts(): AnswerFacts {
    return this.noted.facts();
  }

  error(message: string, code?: StreamErrorCode): string {
    return anthropicStreamError(message, code);
  }
}
