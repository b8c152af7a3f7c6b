// Chat Completions chunk stream -> Responses API events (through ResponsesEventWriter): delta.content -> output
// text, delta.tool_calls[i] -> one function_call item per call index (id and name, then argument fragments),
// finish_reason and the usage chunk (forced upstream) -> response.completed, [DONE] -> the end.
import type { SseEvent } from '../../sse/parser.ts';
import { Facts } from '../answer-facts.ts';
import { isObject, type Json } from '../json-read.ts';
import { fromOpenAIUsage } from '../openai/openai-usage.ts';
import type { ToolNames } from './responses-chat-request.ts';
import { ResponsesEventWriter } from './responses-events.ts';
import { NO_USAGE, safeJson, type AnswerFacts, type StreamErrorCode, type StreamTranslator, type Usage } from '../types.ts';

export class ResponsesFromChatStream implements StreamTranslator {
  complete = false;
  failed = false;
  private readonly w: ResponsesEventWriter;
  private seen: Usage = NO_USAGE;
  private finishReason: unknown = null;
  private readonly started = new Set<number>();
  private readonly noted = new Facts();

  constructor(client: Json, tools: ToolNames, model: string, createdAt: number) {
    this.w = new ResponsesEventWriter(client, tools, model, createdAt);
  }

  event(ev: SseEvent): string {
    if (ev.data === '[DONE]') {
      this.complete = true;
      return this.w.finish(this.finishReason, this.seen);
    }
    const chunk = safeJson(ev.data);
    if (!isObject(chunk)) return '';
    if (isObject(chunk.error) && !('choices' in chunk)) {
      this.complete = true;
      this.failed = true;
      const message = typeof chunk.error.message === 'string' ? chunk.error.message : 'The upstream failed mid-stream.';
      return this.w.start(chunk.id) + this.w.error(message);
    }
    this.noted.noteId(chunk.id);
    let out = this.w.start(chunk.id);
    if (isObject(chunk.usage)) this.seen = fromOpenAIUsage(chunk.usage as Parameters<typeof fromOpenAIUsage>[0]);
    const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : null;
    if (!choice) return out;
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string') out += this.w.textDelta(delta.content);
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((c, position) => {
        if (isObject(c)) out += this.toolDelta(c, position);
      });
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      this.finishReason = choice.finish_reason;
      this.noted.noteReason(choice.finish_reason, typeof choice.index === 'number' ? choice.index : 0);
    }
    return out;
  }

  private toolDelta(c: Json, position: number): string {
    const index = typeof c.index === 'number' ? c.index : position;
    const fn = isObject(c.function) ? c.function : {};
    let out = '';
    if (!this.started.has(index)) {
      this.started.add(index);
      out += this.w.callStart(index, String(c.id ?? `call_${index}`), String(fn.name ?? ''));
    }
    if (typeof fn.arguments === 'string') out += this.w.callArgs(index, fn.arguments);
    return out;
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
    return this.w.error(message, code);
  }
}
