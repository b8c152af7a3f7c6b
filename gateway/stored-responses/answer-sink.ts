// The answer of a call that stores its response or continues one: the response object the client gets says the id the
// gateway gave it, `store` and `previous_response_id` (a translated upstream knows none of them), and the final
// object is handed to `done` as soon as the client has it (a JSON answer once written; a stream at response.completed
// or response.incomplete). Only the lifecycle events carry a response object: the deltas pass untouched.
import type { CallSink, StreamWriter } from '../pipeline/sink.ts';
import { isObject, type Json } from '../translate/json-read.ts';
import { safeJson } from '../translate/types.ts';

export interface AnswerFacts {
  /** The gateway's id for a stored response; null: the upstream's id is kept (store: false). */
  id: string | null;
  store: boolean;
  previousId: string | null;
}

const STORED_STATUSES = new Set(['completed', 'incomplete']);

export function stamped(response: Json, f: AnswerFacts): Json {
  return { ...response, ...(f.id !== null ? { id: f.id } : {}), store: f.store, previous_response_id: f.previousId };
}

export class StoredAnswerSink implements CallSink {
  private readonly inner: CallSink;
  private readonly facts: AnswerFacts;
  private readonly done: (response: Json) => void;
  private delivered = false;

  constructor(inner: CallSink, facts: AnswerFacts, done: (response: Json) => void) {
    this.inner = inner;
    this.facts = facts;
    this.done = done;
  }

  headers(h: Record<string, string>): void {
    this.inner.headers(h);
  }

  json(status: number, headers: Record<string, string>, body: string): void {
    const parsed = status === 200 ? safeJson(body) : undefined;
    if (!isObject(parsed)) {
      this.inner.json(status, headers, body);
      return;
    }
    const response = stamped(parsed, this.facts);
    this.inner.json(status, headers, JSON.stringify(response));
    this.deliver(response);
  }

  stream(headers: Record<string, string>): StreamWriter {
    const w = this.inner.stream(headers);
    return {
      write: (text) => w.write(this.events(text)),
      end: (text) => w.end(text === undefined ? undefined : this.events(text)),
      get destroyed() {
        return w.destroyed;
      },
    };
  }

  private deliver(response: Json): void {
    if (this.delivered || typeof response.status !== 'string' || !STORED_STATUSES.has(response.status)) return;
    this.delivered = true;
    this.done(response);
  }

  /** SSE text (whole events, as the translators write them) with each response object stamped. */
  private events(text: string): string {
    if (!text.includes('"response":{')) return text;
    let final: Json | null = null;
    const out = text.split('\n\n').map((block) => {
      const at = block.indexOf('data: ');
      if (at < 0) return block;
      const data = safeJson(block.slice(at + 6));
      if (!isObject(data) || !isObject(data.response)) return block;
      const response = stamped(data.response, this.facts);
      if (data.type === 'response.completed' || data.type === 'response.incomplete') final = response;
      return `${block.slice(0, at)}data: ${JSON.stringify({ ...data, response })}`;
    });
    const written = out.join('\n\n');
    // Handed over before the event is written, so a GET the client sends after it finds the record (service.ts).
    if (final) this.deliver(final);
    return written;
  }
}
