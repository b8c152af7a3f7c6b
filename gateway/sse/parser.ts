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
    this.buf += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.buf.includes('\r')) this.buf = this.buf.replace(/\r\n?/g, '\n');
    const out: SseEvent[] = [];
    let end = this.buf.indexOf('\n\n');
    while (end !== -1) {
      const ev = parseBlock(this.buf.slice(0, end));
      if (ev) out.push(ev);
      this.buf = this.buf.slice(end + 2);
      end = this.buf.indexOf('\n\n');
    }
    return out;
  }

  /** True when bytes of an unfinished event are pending (a stream that ends here was cut). */
  get pending(): boolean {
    return this.buf.trim().length > 0;
  }
}

function parseBlock(block: string): SseEvent | null {
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
