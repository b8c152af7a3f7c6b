// What a client gets when Node's HTTP parser refuses its request before fastify sees it (headers too large, a
// request not received in time, bytes that are not HTTP/1.1): the catalog's error in the dialect of the path the
// request named, with `Connection: close`, since the connection cannot carry another request.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody, GatewayError, type Dialect } from '../errors/catalog.ts';

interface ClientError extends Error {
  code?: string;
  /** The bytes the parser was reading when it failed (Node sets a Buffer for parse errors). */
  rawPacket?: unknown;
}

/** What Node's parser keeps of a request whose headers it read: its URL (a 408 on a slow body). */
interface ParsingSocket {
  parser?: { incoming?: { url?: string } | null } | null;
}

function errorOf(err: ClientError): GatewayError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError('request_timeout', 'The request (headers and body) was not received in time; the connection is closed.');
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('headers_too_large', 'The request line and headers are too large; the connection is closed.');
    default:
      return new GatewayError('invalid_request', 'The request is not valid HTTP/1.1; the connection is closed.');
  }
}

/** The path of the failed request, from the parsed request or from the first line of the bytes it failed on. */
function pathOf(err: ClientError, socket: Socket): string {
  const url = (socket as Socket & ParsingSocket).parser?.incoming?.url;
  if (url) return url;
  const head = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.subarray(0, 256).toString('latin1') : '';
  return /^[A-Z]+ (\S+)/.exec(head)?.[1] ?? '/';
}

export function dialectOfPath(path: string): Dialect {
  if (path.startsWith('/anthropic')) return 'anthropic';
  return path.startsWith('/cohere/') ? 'cohere' : 'openai';
}

export function clientErrorHandler(err: ClientError, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const ge = errorOf(err);
  const body = JSON.stringify(errorBody(dialectOfPath(pathOf(err, socket)), ge.code, ge.message));
  if (socket.writable) {
    socket.end(
      [
        `HTTP/1.1 ${ge.status} ${STATUS_CODES[ge.status] ?? 'Error'}`,
        'content-type: application/json',
        `content-length: ${Buffer.byteLength(body)}`,
        'access-control-allow-origin: *',
        'connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  }
  // Whatever the client still sends is not read: the socket goes once the answer is out (or at once, unwritable).
  if (socket.writable) socket.once('finish', () => socket.destroy());
  else socket.destroy();
}
