// AWS event-stream frames (application/vnd.amazon.eventstream) to the SSE text the pipeline parses. Each frame is a
// prelude (total length, headers length, prelude CRC), headers, a payload and a message CRC; @smithy/eventstream-codec
// decodes one whole frame and verifies both CRCs. Frames arrive split across TCP chunks or several to a chunk, so
// they are cut out of a buffer by the length in their prelude first. A corrupted frame ends the stream with an error
// event (as an exception frame does): dispatch falls back when it is the first event, the client's stream ends with
// an error otherwise.
import type { Message, MessageHeaders } from '@smithy/eventstream-codec';
import { anthropicErrorType } from './errors.ts';

type Codec = { decode(frame: Uint8Array): Message };

let codec: Promise<Codec> | undefined;

/** Loaded on first use, so a gateway with no Bedrock target never loads the AWS libraries. */
export function loadCodec(): Promise<Codec> {
  codec ??= Promise.all([import('@smithy/eventstream-codec'), import('@smithy/util-utf8')]).then(
    ([{ EventStreamCodec }, { toUtf8, fromUtf8 }]) => new EventStreamCodec(toUtf8, fromUtf8),
  );
  return codec;
}

/** Cuts whole frames out of the chunks as they come. */
export class FrameSplitter {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Uint8Array): Uint8Array[] {
    this.buf = this.buf.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buf, chunk]);
    const frames: Uint8Array[] = [];
    while (this.buf.length >= 4) {
      const total = this.buf.readUInt32BE(0);
      if (total < 16) throw new Error(`event-stream frame length ${total} is impossible`);
      if (this.buf.length < total) break;
      frames.push(this.buf.subarray(0, total));
      this.buf = this.buf.subarray(total);
    }
    return frames;
  }

  /** Bytes left that make no whole frame. */
  get pending(): number {
    return this.buf.length;
  }
}

function header(h: MessageHeaders, name: string): string {
  const v = h[name];
  return v && v.type === 'string' ? v.value : '';
}

export type StreamKind = 'converse' | 'invoke';

function errorEvent(kind: StreamKind, type: string, message: string, status: number): string {
  if (kind === 'invoke') {
    return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: anthropicErrorType(type, status), message } })}\n\n`;
  }
  return `event: error\ndata: ${JSON.stringify({ type, message })}\n\n`;
}

const EXCEPTION_STATUS: Record<string, number> = { throttlingException: 429, ThrottlingException: 429, validationException: 400, ValidationException: 400 };

function exceptionEvent(kind: StreamKind, headers: MessageHeaders, payload: string): string {
  const type = header(headers, ':exception-type') || header(headers, ':error-code') || 'InternalServerException';
  let message = header(headers, ':error-message');
  try {
    const m = (JSON.parse(payload) as { message?: unknown }).message;
    if (typeof m === 'string') message = m;
  } catch {
    /* a payload that is no JSON: the header's message, if any */
  }
  // Exception names inside streams are camelCase (`throttlingException`); Anthropic's shape wants its own type.
  const name = type.charAt(0).toUpperCase() + type.slice(1);
  return errorEvent(kind, name, message || name, EXCEPTION_STATUS[type] ?? 500);
}

const BYTES = /^\{"bytes":"([A-Za-z0-9+/=]*)"/;
const TYPE = /^\{"type":"([a-z_]+)"/;

/** One frame as SSE text. */
function frameToSse(kind: StreamKind, m: Message): string {
  const payload = Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength).toString('utf8');
  const messageType = header(m.headers, ':message-type');
  if (messageType === 'exception' || messageType === 'error') return exceptionEvent(kind, m.headers, payload);
  const eventType = header(m.headers, ':event-type');
  if (kind === 'converse') return `event: ${eventType}\ndata: ${payload}\n\n`;
  // Invoke: `chunk` frames carry `{"bytes": base64(<Anthropic stream event JSON>)}`.
  if (eventType !== 'chunk') return '';
  // {"bytes":"<base64>"} and the event's leading "type" are read without a full parse where they have the usual shape.
  const bytes = BYTES.exec(payload)?.[1] ?? (JSON.parse(payload) as { bytes?: unknown }).bytes;
  if (typeof bytes !== 'string') return '';
  const json = Buffer.from(bytes, 'base64').toString('utf8');
  const type = TYPE.exec(json)?.[1] ?? (JSON.parse(json) as { type?: unknown }).type;
  return `event: ${typeof type === 'string' ? type : 'message'}\ndata: ${json}\n\n`;
}

/**
 * The SSE text of an event stream, one piece per chunk. Reading stops at the first exception or broken frame
 * (returning from the loop cancels the upstream body, which closes its connection).
 */
export async function* eventStreamToSse(source: AsyncIterable<Uint8Array | string>, kind: StreamKind): AsyncGenerator<string> {
  const c = await loadCodec();
  const splitter = new FrameSplitter();
  for await (const chunk of source) {
    let out = '';
    let stop = false;
    try {
      for (const frame of splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) {
        const sse = frameToSse(kind, c.decode(frame));
        out += sse;
        if (sse.startsWith('event: error\n')) {
          stop = true;
          break;
        }
      }
    } catch (err) {
      out += errorEvent(kind, 'InternalServerException', `Bedrock sent a broken event-stream frame (${(err as Error).message})`, 502);
      stop = true;
    }
    if (out) yield out;
    if (stop) return;
  }
  if (splitter.pending > 0) yield errorEvent(kind, 'InternalServerException', 'Bedrock closed the stream inside an event-stream frame', 502);
}
