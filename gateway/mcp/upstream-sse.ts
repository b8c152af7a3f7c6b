// Upstreams that have only the legacy HTTP+SSE transport (MCP 2024-11-05), answered as if they spoke Streamable
// HTTP so the rest of gateway/mcp serves them unchanged. That transport ties a session to one open SSE connection,
// which a session served by any replica cannot keep; so each client request opens its own: GET the SSE URL, read its
// `endpoint` event, replay the session's initialize (its params are this upstream's "session id", sealed in the
// gateway's) and notifications/initialized, POST the request, relay what the stream carries until the response,
// then close the stream. The cost: one more connection and initialize round trip per request. The server's own
// requests cannot reach the client (its answer would come back on another request, maybe to another replica): the
// replayed initialize declares no client capabilities, a ping is answered here, any other request is refused.
import { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { UpstreamFailed, type UpstreamAnswer, type UpstreamRequest } from './upstream-types.ts';

/** The protocol version asked of the upstream when a session carries none (the legacy transport's own). */
export const LEGACY_VERSION = '2024-11-05';
const SESSION_PREFIX = 'sse1.';
/** The id of the replayed initialize: a client's own request ids are left as they are. */
const INIT_ID = 'svc-gateway-initialize';
/** An SSE event larger than this fails the request (16 MiB, as a JSON answer on Streamable HTTP). */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;
/** Idle POST connections are kept less than the 5 s after which a Node.js server closes them (upstream.ts). */
const IDLE_MS = 4_000;

type Message = Record<string, unknown>;

/** What is kept of a client's initialize for the replays: small, so the sealed session id stays small. */
interface InitParams {
  protocolVersion: string;
  clientInfo: { name: string; version: string };
}

const agents = new Map<number, Agent>();

function agent(connectMs: number): Agent {
  let a = agents.get(connectMs);
  if (!a) agents.set(connectMs, (a = new Agent({ connect: { timeout: connectMs }, keepAliveTimeout: IDLE_MS, allowH2: false })));
  return a;
}

const isObject = (v: unknown): v is Message => typeof v === 'object' && v !== null && !Array.isArray(v);
const short = (v: unknown, fallback: string): string => (typeof v === 'string' && v.length > 0 && v.length <= 128 ? v : fallback);

function initParams(params: unknown): InitParams {
  const p = isObject(params) ? params : {};
  const info = isObject(p.clientInfo) ? p.clientInfo : {};
  return {
    protocolVersion: short(p.protocolVersion, LEGACY_VERSION),
    clientInfo: { name: short(info.name, 'svc-gateway'), version: short(info.version, '0') },
  };
}

/** The "session id" of a legacy upstream: the client's initialize params, which the gateway seals in its own. */
export function legacySessionId(p: InitParams): string {
  return SESSION_PREFIX + Buffer.from(JSON.stringify(p)).toString('base64url');
}

function paramsOfSession(id: string | null): InitParams {
  if (id === null || !id.startsWith(SESSION_PREFIX)) return initParams(undefined);
  try {
    return initParams(JSON.parse(Buffer.from(id.slice(SESSION_PREFIX.length), 'base64url').toString('utf8')));
  } catch {
    return initParams(undefined);
  }
}

function status(code: number): UpstreamAnswer {
  return { status: code, contentType: '', sessionId: null, body: Readable.from([]) };
}

interface SseEvent {
  event: string;
  data: string;
}

/** The events of an SSE body (comments and ids dropped: a per-request stream is never resumed). */
async function* sseEvents(body: AsyncIterable<unknown>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buf = '';
  let event = '';
  let data: string[] = [];
  let chars = 0;
  for await (const chunk of body) {
    buf += decoder.decode(chunk as Uint8Array, { stream: true });
    if (buf.length + chars > MAX_EVENT_CHARS) throw new UpstreamFailed(`sent an SSE event above ${MAX_EVENT_CHARS} characters`, false);
    let nl = buf.search(/\r\n|\r|\n/);
    while (nl !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(buf.startsWith('\r\n', nl) ? nl + 2 : nl + 1);
      if (line === '') {
        if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        chars = 0;
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
        if (field === 'event') event = value;
        else if (field === 'data') {
          data.push(value);
          chars += value.length + 1;
        }
      }
      nl = buf.search(/\r\n|\r|\n/);
    }
  }
}

/** One open SSE connection to the upstream and the endpoint its messages are POSTed to. */
class LegacyConnection {
  readonly events: AsyncGenerator<SseEvent>;
  private endpoint: URL | null = null;
  private readonly server: CompiledMcpServer;
  private readonly headers: Record<string, string>;
  private readonly signal: AbortSignal;

  private constructor(server: CompiledMcpServer, headers: Record<string, string>, body: Dispatcher.ResponseData['body'], signal: AbortSignal) {
    this.server = server;
    this.headers = headers;
    this.events = sseEvents(body);
    this.signal = signal;
  }

  static async open(server: CompiledMcpServer, signal: AbortSignal, bearer: string | null): Promise<LegacyConnection> {
    const headers: Record<string, string> = {};
    for (const h of server.headers) if (h.credential.kind === 'value') headers[h.name.toLowerCase()] = h.credential.value;
    if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
    const res = await request(server.url as string, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream' },
      signal,
      dispatcher: agent(server.timeouts.connectMs),
      headersTimeout: server.timeouts.firstByteMs,
      bodyTimeout: 0,
    });
    const type = String(res.headers['content-type'] ?? '');
    if (res.statusCode !== 200 || !type.includes('text/event-stream')) {
      res.body.destroy();
      const why = res.statusCode === 401 || res.statusCode === 403 ? "refused the gateway's credential" : 'answered';
      throw new UpstreamFailed(`${why} (HTTP ${res.statusCode} to the GET of its SSE stream)`, false);
    }
    const c = new LegacyConnection(server, headers, res.body, signal);
    const first = await c.events.next();
    if (first.done || first.value.event !== 'endpoint') throw new UpstreamFailed('sent no endpoint event first on its SSE stream', false);
    let url: URL;
    try {
      url = new URL(first.value.data.trim(), server.url as string);
    } catch {
      throw new UpstreamFailed('sent an endpoint that is not a URL', false);
    }
    // The upstream's credential goes only where its McpServer points.
    if (url.origin !== new URL(server.url as string).origin) throw new UpstreamFailed('sent an endpoint on another origin', false);
    c.endpoint = url;
    return c;
  }

  async post(msg: Message): Promise<void> {
    const res = await request(this.endpoint as URL, {
      method: 'POST',
      headers: { ...this.headers, 'content-type': 'application/json' },
      body: JSON.stringify(msg),
      signal: this.signal,
      dispatcher: agent(this.server.timeouts.connectMs),
      headersTimeout: this.server.timeouts.firstByteMs,
    });
    await res.body.dump();
    if (res.statusCode < 200 || res.statusCode >= 300) throw new UpstreamFailed(`refused a message (HTTP ${res.statusCode})`, false);
  }

  /** Reads the stream up to the response to `id`, dropping what comes before it (nothing, from a sound server). */
  async until(id: string): Promise<Message> {
    // next(), not for-await: leaving a for-await would end the generator the request goes on reading.
    for (let r = await this.events.next(); !r.done; r = await this.events.next()) {
      const m = parse(r.value);
      if (m && m.id === id && m.method === undefined) {
        if (m.error !== undefined) throw new UpstreamFailed('refused the replayed initialize', false);
        return m;
      }
    }
    throw new UpstreamFailed('ended its SSE stream during initialize', false);
  }
}

function parse(ev: SseEvent): Message | null {
  if (ev.event !== 'message') return null;
  try {
    const m: unknown = JSON.parse(ev.data);
    return isObject(m) ? m : null;
  } catch {
    return null;
  }
}

/** The stream's messages as SSE events (bytes, as an upstream's body) for relay.ts, up to the response to `id`; the server's requests answered here. */
async function* untilResponse(c: LegacyConnection, id: unknown): AsyncGenerator<Buffer> {
  for await (const ev of c.events) {
    const m = parse(ev);
    if (!m) continue;
    if (typeof m.method === 'string' && m.id !== undefined) {
      const answer =
        m.method === 'ping'
          ? { jsonrpc: '2.0', id: m.id, result: {} }
          : {
              jsonrpc: '2.0',
              id: m.id,
              error: { code: -32601, message: 'The client is behind a gateway that does not pass the requests of a legacy HTTP+SSE server on to it.' },
            };
      c.post(answer).catch(() => {});
      continue;
    }
    yield Buffer.from(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
    if (m.method === undefined && m.id === id) return;
  }
}

function failure(err: unknown, timedOut: boolean): unknown {
  if (err instanceof UpstreamFailed) return err;
  const code = (err as { code?: string; name?: string }).code ?? (err as { name?: string }).name ?? '';
  const timeout = timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'TimeoutError';
  return new UpstreamFailed(timeout ? 'timed out' : `connection failed (${code || 'error'})`, timeout);
}

/** `bearer`: the server's OAuth access token (spec.oauth), sent on the stream and every post, or null. */
export async function callSseUpstream(
  server: CompiledMcpServer,
  req: UpstreamRequest,
  client: AbortSignal,
  bearer: string | null = null,
): Promise<UpstreamAnswer> {
  // No standing stream to GET (a Streamable HTTP server's 405), no upstream session to DELETE.
  if (req.method === 'GET') return status(405);
  if (req.method === 'DELETE') return status(200);
  let msg: unknown;
  try {
    msg = JSON.parse(req.body ?? '');
  } catch {
    return status(400);
  }
  // Notifications and responses have no stream to go to: each request's session ends with it.
  if (!isObject(msg) || typeof msg.method !== 'string' || msg.id === undefined) return status(202);
  const initialize = msg.method === 'initialize';
  const init = initialize ? initParams(msg.params) : paramsOfSession(req.sessionId);
  const ctrl = new AbortController();
  const signal = AbortSignal.any([client, ctrl.signal, AbortSignal.timeout(server.timeouts.totalMs)]);
  // The stream, its endpoint and the replayed initialize are due within firstByteMs, as an answer's start is.
  let timedOut = false;
  const handshake = setTimeout(() => {
    timedOut = true;
    ctrl.abort();
  }, server.timeouts.firstByteMs);
  let c: LegacyConnection;
  try {
    c = await LegacyConnection.open(server, signal, bearer);
    if (initialize) {
      await c.post({ ...msg, params: { ...init, capabilities: {} } });
    } else {
      await c.post({ jsonrpc: '2.0', id: INIT_ID, method: 'initialize', params: { ...init, capabilities: {} } });
      await c.until(INIT_ID);
      await c.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await c.post(msg);
    }
  } catch (err) {
    ctrl.abort();
    if (client.aborted) throw err;
    throw failure(err, timedOut);
  } finally {
    clearTimeout(handshake);
  }
  // However the answer ends (its response, the client gone, relay.ts done with it), the upstream stream closes.
  const body = Readable.from(untilResponse(c, msg.id));
  body.once('close', () => ctrl.abort());
  return { status: 200, contentType: 'text/event-stream', sessionId: initialize ? legacySessionId(init) : null, body };
}
