// A streamed answer under remote checks: the events pass as they come (their text collected), the events that end
// the stream ([DONE], a finish_reason, message_delta and message_stop, response.completed) are held back, and the
// whole text is checked once the upstream is done. A pass releases the held end; a block (or a service that would
// rewrite text already sent) replaces it with the dialect's error event, so the caller never sees a clean end of an
// answer the service refused. The text before the end has been streamed: for answers nobody may see unchecked, do
// not stream, or use the local detectors, which hold back a window (stream-guard.ts).
import type { Dialect } from '../../errors/catalog.ts';
import type { StreamWriter } from '../../pipeline/sink.ts';
import type { Endpoint } from '../../usage/event.ts';
import { deltasOf } from '../stream-guard.ts';

type Obj = Record<string, unknown>;

/** What the writer needs of its call's remote guard: the whole text checked; null when it passed, else the error text. */
export type CheckWhole = (text: string) => Promise<string | null>;

export class RemoteStreamWriter implements StreamWriter {
  private readonly inner: StreamWriter;
  private readonly endpoint: Endpoint;
  private readonly dialect: Dialect;
  private readonly check: CheckWhole;
  private readonly track: (p: Promise<void>) => void;
  private partial = '';
  private held = '';
  private ending = false;
  private readonly texts = new Map<string, string>();

  constructor(inner: StreamWriter, opts: { endpoint: Endpoint; dialect: Dialect; check: CheckWhole; track: (p: Promise<void>) => void }) {
    this.inner = inner;
    this.endpoint = opts.endpoint;
    this.dialect = opts.dialect;
    this.check = opts.check;
    this.track = opts.track;
  }

  get destroyed(): boolean {
    return this.inner.destroyed;
  }

  write(text: string): Promise<void> | null {
    const out = this.frames(text);
    return out === '' ? null : this.inner.write(out);
  }

  end(text?: string): void {
    const out = this.frames(text ?? '');
    const held = this.held + this.partial;
    if (out !== '') void this.inner.write(out);
    const whole = [...this.texts.values()].join('\n');
    this.track(
      this.check(whole).then((error) => {
        if (!this.inner.destroyed) this.inner.end(error === null ? held : this.errorEvent(error));
      }),
    );
  }

  /** The frames that may pass now; the rest (from the first ending event on) held. */
  private frames(text: string): string {
    this.partial += text;
    let out = '';
    let cut: number;
    while ((cut = this.partial.indexOf('\n\n')) >= 0) {
      const raw = `${this.partial.slice(0, cut)}\n\n`;
      this.partial = this.partial.slice(cut + 2);
      const obj = this.ending ? null : parse(raw);
      if (obj) for (const d of deltasOf(this.endpoint, this.dialect, obj)) this.texts.set(d.channel, (this.texts.get(d.channel) ?? '') + d.text);
      if (!this.ending && (raw.includes('[DONE]') || (obj !== null && this.ends(obj)))) this.ending = true;
      if (this.ending) this.held += raw;
      else out += raw;
    }
    return out;
  }

  private ends(obj: Obj): boolean {
    if (this.dialect === 'anthropic') return obj.type === 'message_delta' || obj.type === 'message_stop';
    if (this.endpoint === 'responses') return obj.type === 'response.completed' || obj.type === 'response.incomplete' || obj.type === 'response.failed';
    const choices = Array.isArray(obj.choices) ? (obj.choices as Obj[]) : [];
    return choices.some((c) => c.finish_reason !== null && c.finish_reason !== undefined);
  }

  private errorEvent(body: string): string {
    const message = JSON.parse(body) as Obj;
    if (this.dialect === 'anthropic') return `event: error\ndata: ${JSON.stringify(message)}\n\n`;
    if (this.endpoint === 'responses')
      return `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'content_blocked', message: (message.error as Obj).message, param: null })}\n\n`;
    return `data: ${JSON.stringify(message)}\n\n`;
  }
}

function parse(raw: string): Obj | null {
  const data = raw
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).replace(/^ /, ''))
    .join('\n');
  if (data === '' || data === '[DONE]') return null;
  try {
    const v = JSON.parse(data) as unknown;
    return typeof v === 'object' && v !== null ? (v as Obj) : null;
  } catch {
    return null;
  }
}
