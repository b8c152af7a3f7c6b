// Anthropic event stream -> Responses API events (through ResponsesEventWriter): message_start opens the response,
// text_delta -> output text, a tool_use block -> a function_call item (input_json_delta -> argument fragments),
// message_delta -> the stop reason and final usage, message_stop -> response.completed. Thinking and pings are
// not passed on (a reasoning item would need the upstream's own encrypted content).
import type { SseEvent } from '../../sse/parser.ts';
import { Facts } from '../answer-facts.ts';
import { AnthropicStreamUsage, type AnthropicUsage } from '../anthropic/anthropic-usage.ts';
import { isObject, type Json } from '../json-read.ts';
import type { ToolNames } from './responses-chat-request.ts';
import { ResponsesEventWriter } from './responses-events.ts';
import { finishReasonOf } from '../stop-reasons.ts';
import { safeJson, type AnswerFacts, type StreamErrorCode, type StreamTranslator, type Usage } from '../types.ts';

export class ResponsesFromAnthropicStream implements StreamTranslator {
  complete = false;
  failed = false;
  private readonly w: ResponsesEventWriter;
  private readonly seen = new AnthropicStreamUsage();
  private finishReason: string | null = null;
  private readonly noted = new Facts();

  constructor(client: Json, tools: ToolNames, model: string, createdAt: number) {
    this.w = new ResponsesEventWriter(client, tools, model, createdAt);
  }

  event(ev: SseEvent): string {
    const data = safeJson(ev.data);
    if (!isObject(data)) return '';
    switch (ev.event ?? data.type) {
      case 'message_start': {
        const message = isObject(data.message) ? data.message : {};
        this.seen.start(message.usage as AnthropicUsage | undefined);
        this.noted.noteId(message.id);
        return this.w.start(message.id);
      }
      case 'content_block_start':
        return this.blockStart(data);
      case 'content_block_delta':
        this.seen.delta();
        return this.blockDelta(data);
      case 'message_delta': {
        this.seen.end(data.usage as AnthropicUsage | undefined);
        const delta = isObject(data.delta) ? data.delta : {};
        if (delta.stop_reason) this.finishReason = finishReasonOf(delta.stop_reason);
        this.noted.noteReason(delta.stop_reason);
        return '';
      }
      case 'message_stop':
        this.complete = true;
        return this.w.finish(this.finishReason, this.usage());
      case 'error': {
        this.complete = true;
        this.failed = true;
        const e = isObject(data.error) ? data.error : {};
        return this.w.start() + this.w.error(typeof e.message === 'string' ? e.message : 'The upstream failed mid-stream.');
      }
      default:
        return '';
    }
  }

  private blockStart(data: Json): string {
    const block = isObject(data.content_block) ? data.content_block : {};
    if (block.type !== 'tool_use' || typeof data.index !== 'number') return '';
    let out = this.w.callStart(data.index, String(block.id ?? ''), String(block.name ?? ''));
    if (isObject(block.input) && Object.keys(block.input).length > 0) out += this.w.callArgs(data.index, JSON.stringify(block.input));
    return out;
  }

  private blockDelta(data: Json): string {
    const delta = isObject(data.delta) ? data.delta : {};
    if (delta.type === 'text_delta' && typeof delta.text === 'string') return this.w.textDelta(delta.text);
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && typeof data.index === 'number') {
      return this.w.callArgs(data.index, delta.partial_json);
    }
    return '';
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
    return this.w.error(message, code);
  }
}
