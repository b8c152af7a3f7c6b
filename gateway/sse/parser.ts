// Incremental Server-Sent Events parser: bytes in, whole events out (WHATWG framing, LF or CRLF).
export interface SseEvent {
  event: string | undefined;
  data: string;
}

export class SseParser {
  private buf = '';
  private readonly decoder = new TextDecoder();

  /** Feeds a chunk; returns the events it completed. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let buf = this.buf + (typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }));
    if (buf.includes('\r')) buf = buf.replace(/\r\n?/g, '\n');
    const out: SseEvent[] = [];
    // A cursor over the buffer: the rest is copied once per chunk, not once per event.
    let start = 0;
    let end = buf.indexOf('\n\n');
    while (end !== -1) {
      const ev = parseBlock(buf, start, end);
      if (ev) out.push(ev);
      start = end + 2;
      end = buf.indexOf('\n\n', start);
    }
    this.buf = start === 0 ? buf : buf.slice(start);
    return out;
  }

  /** True when bytes of an unfinished event are pending (a stream that ends here was cut). */
  get pending(): boolean {
    return this.buf.trim().length > 0;
  }
}

function parseBlock(buf: string, start: number, end: number): SseEvent | null {
  // The common shape, one "data: " line, without splitting.
  if (buf.startsWith('data: ', start) && buf.indexOf('\n', start) >= end) return { event: undefined, data: buf.slice(start + 6, end) };
  const block = buf.slice(start, end);
  let event: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const field = i === -1 ? line : line.slice(0, i);
    let value = i === -1 ? '' : line.slice(i + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (event === undefined && data.length === 0) return null;
  return { event, data: data.join('\n') };
}

export function formatSse(ev: SseEvent): string {
  return `${ev.event !== undefined ? `event: ${ev.event}\n` : ''}data: ${ev.data}\n\n`;
}
