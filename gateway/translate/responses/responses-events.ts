// Writes the Responses API event sequence for a translated stream, fed by an adapter per upstream protocol:
// response.created, response.in_progress, then per output item output_item.added (a message: content_part.added,
// output_text.delta...; a function call: function_call_arguments.delta...), and at the end the .done events of
// every open item and response.completed (or response.incomplete) with usage. A failure after the first byte ends
// with response.failed and an `error` event whose `error` object makes the official SDK raise it.
import { errorBody } from '../../errors/catalog.ts';
import type { Json } from '../json-read.ts';
import type { ToolNames } from './responses-chat-request.ts';
import { functionCallItem, messageItem, responseObject, responsesId, statusOf } from './responses-output.ts';
import type { StreamErrorCode, Usage } from '../types.ts';

interface TextItem {
  kind: 'text';
  index: number;
  id: string;
  text: string;
}
interface CallItem {
  kind: 'call';
  index: number;
  id: string;
  callId: string;
  name: string;
  args: string;
}

export class ResponsesEventWriter {
  private seq = 0;
  private id = responsesId('resp', '');
  private started = false;
  private text: TextItem | null = null;
  private readonly items: Array<TextItem | CallItem> = [];
  private readonly calls = new Map<number | string, CallItem>();
  private readonly client: Json;
  private readonly tools: ToolNames;
  private readonly model: string;
  private readonly createdAt: number;

  constructor(client: Json, tools: ToolNames, model: string, createdAt: number) {
    this.client = client;
    this.tools = tools;
    this.model = model;
    this.createdAt = createdAt;
  }

  private event(type: string, data: Json): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.seq++, ...data })}\n\n`;
  }

  private response(status: string, output: Json[], usage: Usage | null, incomplete: Json | null = null): Json {
    return responseObject(this.client, { id: this.id, model: this.model, createdAt: this.createdAt, status, output, usage, incomplete });
  }

  /** response.created and response.in_progress, once; `upstreamId` names the response. */
  start(upstreamId?: unknown): string {
    if (this.started) return '';
    this.started = true;
    if (upstreamId !== undefined) this.id = responsesId('resp', upstreamId);
    const r = this.response('in_progress', [], null);
    return this.event('response.created', { response: r }) + this.event('response.in_progress', { response: r });
  }

  textDelta(delta: string): string {
    if (delta === '') return '';
    let out = this.start();
    if (!this.text) {
      const index = this.items.length;
      this.text = { kind: 'text', index, id: responsesId('msg', `${this.id}_${index}`), text: '' };
      this.items.push(this.text);
      out += this.event('response.output_item.added', { output_index: index, item: { ...messageItem(this.text.id, '', null, 'in_progress'), content: [] } });
      out += this.event('response.content_part.added', {
        item_id: this.text.id,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      });
    }
    this.text.text += delta;
    return out + this.event('response.output_text.delta', { item_id: this.text.id, output_index: this.text.index, content_index: 0, delta, logprobs: [] });
  }

  /** A new function call, keyed by the upstream's index of it; text that follows opens a new message item. */
  callStart(key: number | string, callId: string, flatName: string): string {
    let out = this.start();
    out += this.closeText();
    const index = this.items.length;
    const call: CallItem = { kind: 'call', index, id: responsesId('fc', callId || `${this.id}_${index}`), callId, name: flatName, args: '' };
    this.items.push(call);
    this.calls.set(key, call);
    return out + this.event('response.output_item.added', { output_index: index, item: this.callItem(call, 'in_progress') });
  }

  callArgs(key: number | string, delta: string): string {
    const call = this.calls.get(key);
    if (!call || delta === '') return '';
    call.args += delta;
    return this.event('response.function_call_arguments.delta', { item_id: call.id, output_index: call.index, delta });
  }

  private callItem(c: CallItem, status: string): Json {
    return functionCallItem({ id: c.id, callId: c.callId, flat: c.name, args: status === 'completed' ? c.args || '{}' : c.args, status }, this.tools);
  }

  private textDone(t: TextItem): Json {
    return messageItem(t.id, t.text, null);
  }

  private closeText(): string {
    const t = this.text;
    if (!t) return '';
    this.text = null;
    const part = { type: 'output_text', text: t.text, annotations: [], logprobs: [] };
    return (
      this.event('response.output_text.done', { item_id: t.id, output_index: t.index, content_index: 0, text: t.text, logprobs: [] }) +
      this.event('response.content_part.done', { item_id: t.id, output_index: t.index, content_index: 0, part }) +
      this.event('response.output_item.done', { output_index: t.index, item: this.textDone(t) })
    );
  }

  /** Closes every open item, then response.completed (or .incomplete) with the output and usage. */
  finish(finishReason: unknown, usage: Usage): string {
    let out = this.start();
    if (this.items.length === 0) out += this.emptyMessage();
    out += this.closeText();
    for (const c of this.calls.values()) {
      const done = this.callItem(c, 'completed');
      out +=
        this.event('response.function_call_arguments.done', { item_id: c.id, output_index: c.index, name: done.name, arguments: done.arguments }) +
        this.event('response.output_item.done', { output_index: c.index, item: done });
    }
    this.calls.clear();
    const output = this.items.map((i) => (i.kind === 'text' ? this.textDone(i) : this.callItem(i, 'completed')));
    const { status, incomplete_details } = statusOf(finishReason);
    return out + this.event(`response.${status}`, { response: this.response(status, output, usage, incomplete_details) });
  }

  /** An answer with no text and no call still has its (empty) message item, as OpenAI sends it. */
  private emptyMessage(): string {
    const index = this.items.length;
    this.text = { kind: 'text', index, id: responsesId('msg', `${this.id}_${index}`), text: '' };
    this.items.push(this.text);
    return (
      this.event('response.output_item.added', { output_index: index, item: { ...messageItem(this.text.id, '', null, 'in_progress'), content: [] } }) +
      this.event('response.content_part.added', {
        item_id: this.text.id,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      })
    );
  }

  /** The explicit end of a failed stream. */
  error(message: string, code: StreamErrorCode = 'upstream_stream_error'): string {
    return responsesStreamError({ id: this.id, model: this.model, createdAt: this.createdAt, seq: this.seq }, message, code, this.client);
  }
}

/**
 * response.failed, then an `error` event: the Responses API's fields (code, message, param) and, for the official
 * SDK (which raises an event whose data has `error`), the gateway's error body.
 */
export function responsesStreamError(
  at: { id: string; model: string; createdAt: number; seq: number },
  message: string,
  code: StreamErrorCode = 'upstream_stream_error',
  client: Json = {},
): string {
  const body = errorBody('openai', code, message) as { error: Json };
  // response.error.code is one of the description's ResponseError codes (server_error for ours); the `error` event
  // after it carries the gateway's own code.
  const failed = {
    ...responseObject(client, { id: at.id, model: at.model, createdAt: at.createdAt, status: 'failed', output: [], usage: null, incomplete: null }),
    error: { code: 'server_error', message },
  };
  const ev = (type: string, seq: number, data: Json): string => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...data })}\n\n`;
  return ev('response.failed', at.seq, { response: failed }) + ev('error', at.seq + 1, { code, message, param: null, error: body.error });
}
