// Anthropic event stream -> OpenAI chat.completion.chunk stream: message_start opens the assistant turn,
// text_delta -> delta.content, tool_use blocks -> delta.tool_calls (id and name first, then input_json_delta as
// function.arguments fragments, one tool-call index per block), message_delta -> finish_reason, message_stop ->
// the usage chunk (when the client asked for it) and [DONE]. Thinking deltas and pings are not passed on.
import type { SseEvent } from '../../sse/parser.ts';
import { AnthropicStreamUsage, type AnthropicUsage } from '../anthropic/anthropic-usage.ts';
import { Facts } from '../answer-facts.ts';
import { completionId } from '../ids.ts';
import { isObject, type Json } from '../json-read.ts';
import { toOpenAIUsage } from './openai-usage.ts';
import { finishReasonOf } from '../stop-reasons.ts';
import { openAIStreamError } from '../stream-errors.ts';
import { safeJson, type AnswerFacts, type StreamErrorCode, type StreamTranslator, type Usage } from '../types.ts';

export class OpenAIFromAnthropicStream implements StreamTranslator {
  complete = false;
  failed = false;
  private readonly model: string;
  private readonly wantsUsage: boolean;
  private readonly created: number;
  private id = completionId('');
  private readonly seen = new AnthropicStreamUsage();
  private readonly noted = new Facts();
  /** OpenAI tool-call index of each Anthropic block index holding a tool_use. */
  private readonly tools = new Map<number, number>();

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

  event(ev: SseEvent): string {
    const data = safeJson(ev.data);
    if (!isObject(data)) return '';
    switch (ev.event ?? data.type) {
      case 'message_start': {
        const message = isObject(data.message) ? data.message : {};
        this.id = completionId(message.id);
        this.noted.noteId(message.id);
        this.seen.start(message.usage as AnthropicUsage | undefined);
        return this.delta({ role: 'assistant', content: '' });
      }
      case 'content_block_start':
        return this.blockStart(data);
      case 'content_block_delta':
        this.seen.delta();
        return this.blockDelta(data);
      case 'message_delta': {
        this.seen.end(data.usage as AnthropicUsage | undefined);
        const delta = isObject(data.delta) ? data.delta : {};
        this.noted.noteReason(delta.stop_reason);
        return delta.stop_reason ? this.delta({}, finishReasonOf(delta.stop_reason)) : '';
      }
      case 'message_stop':
        this.complete = true;
        return (this.wantsUsage ? this.chunk([], { usage: toOpenAIUsage(this.usage()) }) : '') + 'data: [DONE]\n\n';
      case 'error': {
        this.complete = true;
        this.failed = true;
        const e = isObject(data.error) ? data.error : {};
        return this.errorChunk(typeof e.message === 'string' ? e.message : 'The upstream failed mid-stream.', String(e.type ?? 'api_error'));
      }
      default:
        return '';
    }
  }

  private blockStart(data: Json): string {
    const block = isObject(data.content_block) ? data.content_block : {};
    if (block.type !== 'tool_use' || typeof data.index !== 'number') return '';
    const index = this.tools.size;
    this.tools.set(data.index, index);
    const input = isObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
    return this.delta({
      tool_calls: [{ index, id: String(block.id ?? ''), type: 'function', function: { name: String(block.name ?? ''), arguments: input } }],
    });
  }

  private blockDelta(data: Json): string {
    const delta = isObject(data.delta) ? data.delta : {};
    if (delta.type === 'text_delta' && typeof delta.text === 'string') return this.delta({ content: delta.text });
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && typeof data.index === 'number') {
      const index = this.tools.get(data.index);
      if (index === undefined || delta.partial_json === '') return '';
      return this.delta({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] });
    }
    return '';
  }

  private errorChunk(message: string, type = 'api_error'): string {
    return `data: ${JSON.stringify({ error: { message, type, param: null, code: 'upstream_stream_error' } })}\n\n`;
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
    return openAIStreamError(message, code);
  }
}
