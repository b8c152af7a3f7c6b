// Output checks on a streamed answer without waiting for its end. The text deltas of each channel (a choice, a
// content block, an output item) are held back by a window as long as the longest thing a check can match, so a
// match split across chunks is still seen whole: what leaves is masked and restored, a block ends the stream with
// the dialect's error event. Each event keeps its place; a channel's held text leaves in an event of the same kind
// just before the event that ends the channel.
import type { Dialect } from '../errors/catalog.ts';
import type { StreamWriter } from '../pipeline/sink.ts';
import type { Endpoint } from '../usage/event.ts';
import type { GuardFact } from './apply.ts';

/** What the stream needs of its call's guard (call-guard.ts). */
export interface TextGuard {
  checkText(text: string): { text: string; blocked: GuardFact | null };
  blockedBody(f: GuardFact): string;
}

/** Held back per channel: longer than any token, key or placeholder the checks look for (a private key excepted: its header alone is matched). */
export const WINDOW = 256;

type Obj = Record<string, unknown>;

interface Frame {
  event: string | null;
  data: string;
}

export class StreamGuard implements StreamWriter {
  private readonly inner: StreamWriter;
  private readonly guard: TextGuard;
  private readonly endpoint: Endpoint;
  private readonly dialect: Dialect;
  private partial = '';
  private readonly held = new Map<string, string>();
  /** The last event that carried each channel's text: the template of the event its held text leaves in. */
  private readonly template = new Map<string, { event: string | null; obj: Obj; set: (o: Obj, text: string) => void }>();
  private blocked = false;
  private blockEvent = '';

  constructor(inner: StreamWriter, guard: TextGuard, endpoint: Endpoint, dialect: Dialect) {
    this.inner = inner;
    this.guard = guard;
    this.endpoint = endpoint;
    this.dialect = dialect;
  }

  get destroyed(): boolean {
    return this.blocked || this.inner.destroyed;
  }

  write(text: string): Promise<void> | null {
    if (this.blocked) return null;
    const out = this.frames(text, false);
    if (this.blocked) return this.endBlocked(out);
    return out.length > 0 ? this.inner.write(out) : null;
  }

  end(text?: string): void {
    if (this.blocked) return;
    const out = this.frames(text ?? '', true);
    if (this.blocked) this.endBlocked(out);
    else this.inner.end(out);
  }

  /** What was released before the block, then the error event, and the end. */
  private endBlocked(out: string): null {
    if (!this.inner.destroyed) this.inner.end(out + this.blockEvent);
    return null;
  }

  /** Complete frames out of the text so far, each passed through the checks. */
  private frames(text: string, last: boolean): string {
    this.partial += text;
    let out = '';
    let cut: number;
    while (!this.blocked && (cut = this.partial.indexOf('\n\n')) >= 0) {
      const raw = this.partial.slice(0, cut);
      this.partial = this.partial.slice(cut + 2);
      out += this.frame(raw);
    }
    if (last && !this.blocked) {
      out += this.flushAll();
      if (this.partial.length > 0 && !this.blocked) out += this.partial;
      this.partial = '';
    }
    return out;
  }

  private frame(raw: string): string {
    const f = parseFrame(raw);
    if (!f || f.data === '[DONE]') return this.flushAll() + (this.blocked ? '' : `${raw}\n\n`);
    let obj: Obj;
    try {
      obj = JSON.parse(f.data) as Obj;
    } catch {
      return `${raw}\n\n`;
    }
    const before = this.closing(f, obj);
    if (this.blocked) return before;
    const changed = this.deltas(f, obj);
    if (this.blocked) return before;
    this.whole(obj);
    if (this.blocked) return before;
    return before + (changed || this.touched ? render(f.event, obj) : `${raw}\n\n`);
  }

  private touched = false;

  /** The held text of the channels this event ends, in events of their own before it. */
  private closing(f: Frame, obj: Obj): string {
    const ends: string[] = [];
    if (this.dialect === 'anthropic' && obj.type === 'content_block_stop') ends.push(`b${String(obj.index)}`);
    if (this.dialect === 'anthropic' && obj.type === 'message_delta') ends.push(...this.held.keys());
    if (this.endpoint === 'responses' && typeof obj.type === 'string' && (obj.type.endsWith('.done') || obj.type === 'response.completed')) {
      if (obj.type === 'response.output_text.done' || obj.type === 'response.function_call_arguments.done') ends.push(channelOfResponses(obj));
      if (obj.type === 'response.completed') ends.push(...this.held.keys());
    }
    if ((this.endpoint === 'chat.completions' || this.endpoint === 'completions') && Array.isArray(obj.choices)) {
      const finished = (obj.choices as Obj[]).filter((c) => c.finish_reason).map((c) => `c${String(c.index)}.`);
      ends.push(...[...this.held.keys()].filter((k) => finished.some((prefix) => k.startsWith(prefix))));
    }
    void f;
    return ends.map((k) => this.flush(k)).join('');
  }

  /** Replaces the text deltas of this event with what may leave now; true when the event changed. */
  private deltas(f: Frame, obj: Obj): boolean {
    let changed = false;
    for (const d of deltasOf(this.endpoint, this.dialect, obj)) {
      this.template.set(d.channel, { event: f.event, obj, set: d.set });
      const text = (this.held.get(d.channel) ?? '') + d.text;
      const release = this.releasable(text);
      if (this.blocked) return false;
      this.held.set(d.channel, text.slice(release.consumed));
      d.set(obj, release.out);
      changed = true;
    }
    return changed;
  }

  /** Whole texts carried by closing events (output_text.done's text, response.completed's output): checked as a whole. */
  private whole(obj: Obj): void {
    if (this.endpoint !== 'responses') return;
    if (obj.type === 'response.output_text.done' && typeof obj.text === 'string') {
      const r = this.guard.checkText(obj.text);
      if (r.blocked) return this.block(r.blocked);
      obj.text = r.text;
      this.touched = true;
    }
    if (obj.type === 'response.function_call_arguments.done' && typeof obj.arguments === 'string') {
      const r = this.guard.checkText(obj.arguments);
      if (r.blocked) return this.block(r.blocked);
      obj.arguments = r.text;
      this.touched = true;
    }
    const resp = obj.response as Obj | undefined;
    if ((obj.type === 'response.completed' || obj.type === 'response.incomplete') && resp && Array.isArray(resp.output)) {
      for (const item of resp.output as Obj[]) if (!this.checkItem(item)) return;
      this.touched = true;
    }
  }

  /** One output item of a whole response, checked in place; false when a check blocked. */
  private checkItem(item: Obj): boolean {
    const texts: Obj[] = Array.isArray(item.content) ? (item.content as Obj[]).filter((c) => typeof c.text === 'string') : [];
    for (const c of texts) {
      const r = this.guard.checkText(c.text as string);
      if (r.blocked) return (this.block(r.blocked), false);
      c.text = r.text;
    }
    if (typeof item.arguments === 'string') {
      const r = this.guard.checkText(item.arguments);
      if (r.blocked) return (this.block(r.blocked), false);
      item.arguments = r.text;
    }
    return true;
  }

  /** How much of a channel's held text may leave: all but the window, never cutting a match or a placeholder. */
  private releasable(text: string, all = false): { out: string; consumed: number } {
    let at = all ? text.length : Math.max(0, text.length - WINDOW);
    if (at === 0) return { out: '', consumed: 0 };
    if (!all) {
      // Not inside a placeholder being restored ("<EMAIL_" ... ">").
      const open = text.lastIndexOf('<', at);
      if (open >= 0 && open > at - 32 && text.indexOf('>', open) >= at) at = open;
      // Not inside a word: a token is cut only at whitespace, so a detector sees it whole. Held text that starts
      // inside a word (the last release ended at a space) has its boundary at 0 (space -1): nothing leaves yet.
      const space = Math.max(text.lastIndexOf(' ', at), text.lastIndexOf('\n', at));
      if (space > at - WINDOW / 2) at = space + 1;
      if (at === 0) return { out: '', consumed: 0 };
    }
    const r = this.guard.checkText(text.slice(0, at));
    if (r.blocked) {
      this.block(r.blocked);
      return { out: '', consumed: 0 };
    }
    return { out: r.text, consumed: at };
  }

  private flush(channel: string): string {
    const text = this.held.get(channel);
    const t = this.template.get(channel);
    this.held.delete(channel);
    if (!text || !t) return '';
    const r = this.releasable(text, true);
    if (this.blocked || r.out.length === 0) return '';
    const obj = structuredClone(t.obj);
    clearDeltas(this.endpoint, this.dialect, obj);
    t.set(obj, r.out);
    return render(t.event, obj);
  }

  private flushAll(): string {
    let out = '';
    for (const k of [...this.held.keys()]) out += this.flush(k);
    return out;
  }

  private block(f: GuardFact): void {
    this.blocked = true;
    const message = JSON.parse(this.guard.blockedBody(f)) as Obj;
    const event =
      this.dialect === 'anthropic'
        ? `event: error\ndata: ${JSON.stringify(message)}\n\n`
        : this.endpoint === 'responses'
          ? `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'content_blocked', message: (message.error as Obj).message, param: null })}\n\n`
          : `data: ${JSON.stringify(message)}\n\n`;
    this.blockEvent = event;
  }
}

interface Delta {
  channel: string;
  text: string;
  set: (obj: Obj, text: string) => void;
}

function channelOfResponses(obj: Obj): string {
  return `r${String(obj.item_id ?? obj.output_index)}.${String(obj.content_index ?? 'a')}`;
}

/** The text deltas an event carries, by channel, with how to write a new text into an event of its kind (remote/stream.ts reads them too). */
export function deltasOf(endpoint: Endpoint, dialect: Dialect, obj: Obj): Delta[] {
  if (dialect === 'anthropic') {
    const d = obj.delta as Obj | undefined;
    if (obj.type !== 'content_block_delta' || !d) return [];
    if (d.type === 'text_delta' && typeof d.text === 'string')
      return [{ channel: `b${String(obj.index)}`, text: d.text, set: (o, t) => ((o.delta as Obj).text = t) }];
    if (d.type === 'input_json_delta' && typeof d.partial_json === 'string')
      return [{ channel: `b${String(obj.index)}`, text: d.partial_json, set: (o, t) => ((o.delta as Obj).partial_json = t) }];
    return [];
  }
  if (endpoint === 'responses') {
    if ((obj.type === 'response.output_text.delta' || obj.type === 'response.function_call_arguments.delta') && typeof obj.delta === 'string')
      return [{ channel: channelOfResponses(obj), text: obj.delta, set: (o, t) => (o.delta = t) }];
    return [];
  }
  const out: Delta[] = [];
  const choices = Array.isArray(obj.choices) ? (obj.choices as Obj[]) : [];
  choices.forEach((c, ci) => {
    if (typeof c.text === 'string')
      out.push({ channel: `c${String(c.index)}.text`, text: c.text, set: (o, t) => (((o.choices as Obj[])[ci] as Obj).text = t) });
    const d = c.delta as Obj | undefined;
    if (!d) return;
    if (typeof d.content === 'string')
      out.push({ channel: `c${String(c.index)}.content`, text: d.content, set: (o, t) => ((((o.choices as Obj[])[ci] as Obj).delta as Obj).content = t) });
    const calls = Array.isArray(d.tool_calls) ? (d.tool_calls as Obj[]) : [];
    calls.forEach((call, ti) => {
      const fn = call.function as Obj | undefined;
      if (fn && typeof fn.arguments === 'string')
        out.push({
          channel: `c${String(c.index)}.tool${String(call.index)}`,
          text: fn.arguments,
          set: (o, t) => ((((((o.choices as Obj[])[ci] as Obj).delta as Obj).tool_calls as Obj[])[ti]!.function as Obj).arguments = t),
        });
    });
  });
  return out;
}

/** An event copied to carry held text only: its other fields as they were, nothing that ends anything. */
function clearDeltas(endpoint: Endpoint, dialect: Dialect, obj: Obj): void {
  if (dialect === 'anthropic' || endpoint === 'responses') return;
  for (const c of Array.isArray(obj.choices) ? (obj.choices as Obj[]) : []) {
    c.finish_reason = null;
    if (c.delta) {
      const d = c.delta as Obj;
      if (typeof d.content === 'string') d.content = '';
      delete d.role;
    }
  }
  delete obj.usage;
}

function parseFrame(raw: string): Frame | null {
  let event: string | null = null;
  const data: string[] = [];
  for (const line of raw.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return data.length > 0 ? { event, data: data.join('\n') } : null;
}

function render(event: string | null, obj: Obj): string {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(obj)}\n\n`;
}
