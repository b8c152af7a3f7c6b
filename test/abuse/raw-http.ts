// A raw HTTP/1.1 client over a TCP socket, for what fetch cannot send: duplicate headers, a Content-Length the body
// never reaches, a 100 KB header, bodies and headers trickled a byte at a time. It reads one answer (Content-Length,
// chunked, or up to the close) and reports how the connection ended.
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  /** null when no answer came (the socket closed first, or the time ran out). */
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** The server closed (or reset) the connection. */
  closed: boolean;
  /** Milliseconds from the first byte written to the answer's end, the close or the time limit. */
  ms: number;
  timedOut: boolean;
}

export interface RawOptions {
  timeoutMs: number;
  /** Written after `head`, one piece every `everyMs` (slow clients); stops once the server answered or closed. */
  trickle?: { pieces: Array<string | Buffer>; everyMs: number };
  /** After a complete answer, wait this long to see whether the server closes (default: return at once). */
  lingerMs?: number;
}

interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  complete: boolean;
}

function dechunk(buf: Buffer): { body: Buffer; complete: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return { body: Buffer.concat(parts), complete: false };
    const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) return { body: Buffer.concat(parts), complete: false };
    if (size === 0) return { body: Buffer.concat(parts), complete: buf.length >= eol + 4 };
    if (buf.length < eol + 2 + size) return { body: Buffer.concat(parts), complete: false };
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

export function parseAnswer(buf: Buffer, closed: boolean): Parsed | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) return null;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) {
      const k = line.slice(0, i).trim().toLowerCase();
      const v = line.slice(i + 1).trim();
      headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
    }
  }
  const rest = buf.subarray(end + 4);
  const status = Number(m[1]);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) return { status, headers, ...dechunk(rest) };
  const len = headers['content-length'];
  if (len !== undefined) return { status, headers, body: rest.subarray(0, Number(len)), complete: rest.length >= Number(len) };
  if (status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0), complete: true };
  return { status, headers, body: rest, complete: closed };
}

/** Sends `head` (request line, headers and any body bytes) to 127.0.0.1:port and reads one answer. */
export function rawRequest(port: number, head: string | Buffer, opts: RawOptions): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let closed = false;
    let settled = false;
    let trickle: NodeJS.Timeout | undefined;
    const socket: Socket = connect({ port, host: '127.0.0.1' });
    const finish = (timedOut: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(trickle);
      const p = parseAnswer(Buffer.concat(chunks), closed);
      socket.destroy();
      resolve({
        status: p?.status ?? null,
        headers: p?.headers ?? {},
        body: p?.body.toString('utf8') ?? '',
        closed,
        ms: Date.now() - started,
        timedOut,
      });
    };
    const maybeDone = (): void => {
      const p = parseAnswer(Buffer.concat(chunks), closed);
      if (!p?.complete) return;
      clearInterval(trickle);
      if (!opts.lingerMs) return finish(false);
      setTimeout(() => finish(false), opts.lingerMs);
    };
    const timer = setTimeout(() => finish(true), opts.timeoutMs);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      maybeDone();
    });
    const onEnd = (): void => {
      closed = true;
      finish(false);
    };
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    socket.on('error', () => {}); // a reset is reported as closed
    socket.once('connect', () => {
      socket.write(head);
      const pieces = [...(opts.trickle?.pieces ?? [])];
      if (pieces.length === 0) return;
      trickle = setInterval(() => {
        const next = pieces.shift();
        if (next === undefined || socket.destroyed) return clearInterval(trickle);
        socket.write(next);
      }, opts.trickle?.everyMs ?? 100);
    });
  });
}

/** A request's bytes: the request line, headers as given (so duplicates stay), then the body. */
export function requestBytes(method: string, path: string, headers: Array<[string, string]>, body?: string | Buffer): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', ...headers.map(([k, v]) => `${k}: ${v}`)];
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return body === undefined ? head : Buffer.concat([head, typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}
