// A Converse stream (the transport yields one SSE event per event-stream frame, named by its event type:
// messageStart, contentBlockStart, contentBlockDelta, contentBlockStop, messageStop, metadata; `error` for an
// exception) -> Anthropic's stream events, which the existing Anthropic-reading translators turn into each client
// dialect, so every mapping lives once. Converse opens no text block (its first delta does), names the stop reason
// in messageStop and reports usage after it (metadata): message_delta and message_stop are written once both came.
// Usage is read here (ConverseStreamUsage), not from the synthesized events: a cut stream reports nothing.
import type { SseEvent } from '../../sse/parser.ts';
import { anthropicEvent } from '../anthropic/anthropic-sse.ts';
import { stopReasonOfConverse, stopSequenceOf } from './converse-output.ts';
import { ConverseStreamUsage, converseToAnthropicUsage, type ConverseUsage } from './converse-usage.ts';
import { isObject, type Json } from '../json-read.ts';
import type { StopReason } from '../stop-reasons.ts';
import { safeJson, type AnswerFacts, type StreamErrorCode, type StreamTranslator, type Usage } from '../types.ts';
import { Facts } from '../answer-facts.ts';

/** Bedrock exception types -> Anthropic error types (what the SDKs raise). */
function errorTypeOf(type: unknown): string {
  switch (type) {
    case 'throttlingException':
    case 'ThrottlingException':
      return 'rate_limit_error';
    case 'serviceUnavailableException':
    case 'ServiceUnavailableException':
    case 'ModelNotReadyException':
      return 'overloaded_error';
    case 'validationException':
    case 'ValidationException':
      return 'invalid_request_error';
    default:
      return 'api_error';
  }
}

type Block = 'text' | 'tool' | 'thinking' | 'redacted';

/** Converse events -> Anthropic events (as the SSE parser would yield them). */
export class ConverseToAnthropic {
  readonly seen = new ConverseStreamUsage();
  complete = false;
  failed = false;
  private readonly model: string;
  private readonly id: string;
  private readonly stopSequences: readonly string[];
  private started = false;
  private stop: StopReason | null = null;
  private usageReport: ConverseUsage | null = null;
  /** Anthropic index and kind of each open Converse block index. */
  private readonly open = new Map<number, { index: number; kind: Block }>();
  private blocks = 0;

  constructor(model: string, id: string, stopSequences: readonly string[]) {
    this.model = model;
    this.id = id;
    this.stopSequences = stopSequences;
  }

  private ev(type: string, data: Json): SseEvent {
    return { event: type, data: JSON.stringify({ type, ...data }) };
  }

  private start(): SseEvent[] {
    if (this.started) return [];
    this.started = true;
    const message = {
      id: this.id,
      type: 'message',
      role: 'assistant',
      model: this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return [this.ev('message_start', { message })];
  }

  /** The payload of a frame: bare (as the event-stream frame carries it) or wrapped in its event name. */
  private payload(ev: SseEvent): { name: string; data: Json } | null {
    const raw = safeJson(ev.data);
    if (!isObject(raw)) return null;
    let name = ev.event;
    if (name === undefined) {
      const keys = Object.keys(raw);
      if (keys.length !== 1 || keys[0] === undefined) return null;
      name = keys[0];
    }
    const inner = raw[name];
    return { name, data: isObject(inner) && name !== 'error' ? inner : raw };
  }

  events(ev: SseEvent): SseEvent[] {
    const p = this.payload(ev);
    if (!p || this.complete) return [];
    const { name, data } = p;
    switch (name) {
      case 'messageStart':
        return this.start();
      case 'contentBlockStart':
        return [...this.start(), ...this.blockStart(data)];
      case 'contentBlockDelta':
        return [...this.start(), ...this.blockDelta(data)];
      case 'contentBlockStop':
        return this.blockStop(typeof data.contentBlockIndex === 'number' ? data.contentBlockIndex : -1);
      case 'messageStop':
        this.stop = stopReasonOfConverse(data.stopReason);
        return [...this.start(), ...this.end()];
      case 'metadata':
        this.usageReport = isObject(data.usage) ? (data.usage as ConverseUsage) : {};
        return this.end();
      case 'error':
        return this.fail(data);
      default:
        // An exception the transport named by its own type (internalServerException, ...).
        if (/Exception$/i.test(name)) return this.fail({ type: name, message: data.message });
        return [];
    }
  }

  private fail(data: Json): SseEvent[] {
    this.complete = true;
    this.failed = true;
    const message = typeof data.message === 'string' ? data.message : 'The upstream failed mid-stream.';
    return [this.ev('error', { error: { type: errorTypeOf(data.type), message } })];
  }

  private openBlock(at: number, kind: Block, block: Json): SseEvent[] {
    const index = this.blocks++;
    this.open.set(at, { index, kind });
    return [this.ev('content_block_start', { index, content_block: block })];
  }

  private blockStart(data: Json): SseEvent[] {
    const at = typeof data.contentBlockIndex === 'number' ? data.contentBlockIndex : this.blocks;
    const start = isObject(data.start) ? data.start : {};
    if (!isObject(start.toolUse)) return [];
    const u = start.toolUse;
    // A model that reuses the index of the text before the call: that text block ends here.
    return [...this.blockStop(at), ...this.openBlock(at, 'tool', { type: 'tool_use', id: String(u.toolUseId ?? ''), name: String(u.name ?? ''), input: {} })];
  }

  private blockDelta(data: Json): SseEvent[] {
    const at = typeof data.contentBlockIndex === 'number' ? data.contentBlockIndex : 0;
    const delta = isObject(data.delta) ? data.delta : {};
    const out: SseEvent[] = [];
    let block = this.open.get(at);
    const kind: Block | null = typeof delta.text === 'string' ? 'text' : isObject(delta.reasoningContent) ? 'thinking' : null;
    if (block && kind && block.kind !== kind && !(kind === 'thinking' && block.kind === 'redacted')) {
      // Text or reasoning at the index of a block of another kind: that block ends, a new one opens.
      out.push(...this.blockStop(at));
      block = undefined;
    }
    const delta_ = (d: Json): SseEvent => {
      this.seen.delta();
      return this.ev('content_block_delta', { index: block?.index ?? 0, delta: d });
    };
    if (typeof delta.text === 'string') {
      if (!block) {
        out.push(...this.openBlock(at, 'text', { type: 'text', text: '' }));
        block = this.open.get(at);
      }
      if (block?.kind === 'text' && delta.text !== '') out.push(delta_({ type: 'text_delta', text: delta.text }));
    } else if (isObject(delta.toolUse)) {
      const input = delta.toolUse.input;
      if (block?.kind === 'tool' && typeof input === 'string' && input !== '') out.push(delta_({ type: 'input_json_delta', partial_json: input }));
    } else if (isObject(delta.reasoningContent)) {
      const r = delta.reasoningContent;
      if (!block && typeof r.redactedContent === 'string') {
        this.seen.delta();
        return this.openBlock(at, 'redacted', { type: 'redacted_thinking', data: r.redactedContent });
      }
      if (!block) {
        out.push(...this.openBlock(at, 'thinking', { type: 'thinking', thinking: '', signature: '' }));
        block = this.open.get(at);
      }
      if (block?.kind !== 'thinking') return out;
      if (typeof r.text === 'string' && r.text !== '') out.push(delta_({ type: 'thinking_delta', thinking: r.text }));
      if (typeof r.signature === 'string' && r.signature !== '') out.push(delta_({ type: 'signature_delta', signature: r.signature }));
    }
    return out;
  }

  private blockStop(at: number): SseEvent[] {
    const block = this.open.get(at);
    if (!block) return [];
    this.open.delete(at);
    return [this.ev('content_block_stop', { index: block.index })];
  }

  /** Once the stop reason and the usage both came: the open blocks closed, message_delta and message_stop. */
  private end(): SseEvent[] {
    if (this.stop === null || this.usageReport === null) return [];
    this.complete = true;
    this.seen.end(this.usageReport);
    const out: SseEvent[] = [];
    for (const at of [...this.open.keys()]) out.push(...this.blockStop(at));
    const u = converseToAnthropicUsage(this.usageReport);
    out.push(
      this.ev('message_delta', {
        delta: { stop_reason: this.stop, stop_sequence: stopSequenceOf(this.stop, this.stopSequences) },
        usage: { ...u, input_tokens: u.input_tokens ?? 0, output_tokens: u.output_tokens ?? 0 },
      }),
      this.ev('message_stop', {}),
    );
    return out;
  }
}

/** A client-dialect stream translator fed Anthropic events: the Converse events go through ConverseToAnthropic first. */
export class ConverseStream implements StreamTranslator {
  private readonly from: ConverseToAnthropic;
  private readonly to: StreamTranslator;

  constructor(from: ConverseToAnthropic, to: StreamTranslator) {
    this.from = from;
    this.to = to;
  }

  get complete(): boolean {
    return this.from.complete;
  }

  get failed(): boolean {
    return this.from.failed;
  }

  event(ev: SseEvent): string {
    return this.from
      .events(ev)
      .map((e) => this.to.event(e))
      .join('');
  }

  finish(): string {
    return this.to.finish();
  }

  usage(): Usage {
    return this.from.seen.usage();
  }

  error(message: string, code?: StreamErrorCode): string {
    return this.to.error(message, code);
  }

  facts(): AnswerFacts {
    return this.to.facts();
  }
}

/** The Anthropic client's side: the synthesized events written as they are. */
export class AnthropicEventWriter implements StreamTranslator {
  complete = false;
  failed = false;
  private readonly fail: (message: string, code?: StreamErrorCode) => string;

  constructor(fail: (message: string, code?: StreamErrorCode) => string) {
    this.fail = fail;
  }

  private readonly noted = new Facts();

  event(ev: SseEvent): string {
    const data = safeJson(ev.data);
    if (!isObject(data) || ev.event === undefined) return '';
    if (ev.event === 'message_start' && isObject(data.message)) this.noted.noteId(data.message.id);
    else if (ev.event === 'message_delta' && isObject(data.delta)) this.noted.noteReason(data.delta.stop_reason);
    return anthropicEvent(ev.event, data);
  }

  facts(): AnswerFacts {
    return this.noted.facts();
  }

  finish(): string {
    return '';
  }

  usage(): Usage {
    return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  }

  error(message: string, code?: StreamErrorCode): string {
    return this.fail(message, code);
  }
}
