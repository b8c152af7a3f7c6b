// /mcp and /mcp/<server> (gateway/mcp/): the key checked before the body is read (a missing or bad one gets 401, a
// JSON-RPC error body and a plain Bearer challenge: no OAuth metadata is advertised, so clients keep the header
// they were given), browser requests refused (DNS-rebinding protection), every failure a JSON-RPC error.
import { Readable } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/catalog.ts';
import type { McpAnswer } from '../mcp/answer.ts';
import { deleteAll, postAll } from '../mcp/aggregate.ts';
import { getAll } from '../mcp/aggregate-stream.ts';
import type { McpContext } from '../mcp/context.ts';
import type { McpTracer } from '../mcp/trace.ts';
import { readMessage, RPC, RpcRefusal, rpcError, type ClientMessage } from '../mcp/jsonrpc.ts';
import { deleteOne, getOne, postOne } from '../mcp/one.ts';
import { McpSessions } from '../mcp/sessions.ts';
import { closeUpstreams } from '../mcp/close.ts';
import { DEFAULT_MCP_SETTINGS, type McpSettings } from '../mcp/settings.ts';
import { authenticate } from '../pipeline/authenticate.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { keyCacheOf } from '../pipeline/key-cache.ts';
import { principal } from '../pipeline/resolve.ts';
import { watchClient } from './client-watch.ts';

/** A POST body above this is refused with 413 (a JSON-RPC message of a tool call is small). */
export const MCP_BODY_LIMIT = 4 * 1024 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** The MCP caller, set by the /mcp onRequest hook. */
    mcpCaller: Pick<McpContext, 'p' | 'keyHash'> | null;
  }
}

function header(req: FastifyRequest, name: string): string | null {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? null;
}

function sendAnswer(reply: FastifyReply, a: McpAnswer): FastifyReply {
  if (a.kind !== 'status' && a.sessionId) void reply.header('mcp-session-id', a.sessionId);
  switch (a.kind) {
    case 'json':
      if (a.retryAfterSec !== undefined) void reply.header('retry-after', String(a.retryAfterSec));
      if (a.status === 401) void reply.header('www-authenticate', 'Bearer');
      return reply.code(a.status).type('application/json').send(a.body);
    case 'accepted':
      return reply.code(202).send();
    case 'stream':
      return reply
        .code(200)
        .headers({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' })
        .send(Readable.from(a.events));
    case 'status':
      if (a.allow) void reply.header('allow', a.allow);
      return reply.code(a.status).send();
    default: {
      const never: never = a;
      return never;
    }
  }
}

function errorAnswer(err: FastifyError | Error): McpAnswer {
  if (err instanceof RpcRefusal) return { kind: 'json', status: err.status, body: rpcError(null, err.code, err.message) };
  if (err instanceof GatewayError && err.status === 401)
    return { kind: 'json', status: 401, body: rpcError(null, RPC.unauthorized, err.message, { type: err.code }) };
  if (err instanceof GatewayError) return { kind: 'json', status: err.status, body: rpcError(null, RPC.invalidRequest, err.message, { type: err.code }) };
  const fe = err as FastifyError;
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || fe.statusCode === 413) {
    return { kind: 'json', status: 413, body: rpcError(null, RPC.invalidRequest, `The request body is larger than ${MCP_BODY_LIMIT} bytes.`) };
  }
  if (fe.code?.startsWith('FST_ERR_CTP_') || err instanceof SyntaxError) {
    return { kind: 'json', status: 400, body: rpcError(null, RPC.parseError, 'The request body is not valid JSON.') };
  }
  return { kind: 'json', status: 500, body: rpcError(null, RPC.internalError, 'The gateway failed to process the request.') };
}

/** What a page of an allowed origin may send, and read of the answer (the session id above all). */
const ALLOW_HEADERS = 'authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id';
const EXPOSE_HEADERS = 'mcp-session-id, mcp-protocol-version, www-authenticate, retry-after';

/** `tracer`: present while tracing is on; each POSTed message is a span (gateway/tracing/mcp-trace.ts). */
export function mcpRoutes(deps: GatewayDeps, tracer?: McpTracer, settings: McpSettings = DEFAULT_MCP_SETTINGS): (app: FastifyInstance) => Promise<void> {
  const allowedOrigins = new Set(settings.allowedOrigins);
  const sessions = new McpSessions(deps.pepper, deps.store.mcpSessions, settings.idleMs);
  return async (app) => {
    const stopSweep = sessions.sweep({
      close: closeUpstreams(() => deps.config.current()),
      warn: (message, err) => deps.log.warn({ error: err instanceof Error ? err.message : String(err) }, message),
    });
    app.addHook('onClose', async () => stopSweep());
    app.decorateRequest('mcpCaller', null);
    app.setErrorHandler((err: FastifyError, req, reply) => {
      if (reply.sent || reply.raw.headersSent) return;
      const a = errorAnswer(err);
      if (a.kind === 'json' && a.status >= 500) req.log.error({ err }, 'MCP request failed');
      return sendAnswer(reply, a);
    });
    app.setNotFoundHandler((req, reply) =>
      sendAnswer(reply, { kind: 'json', status: 404, body: rpcError(null, RPC.invalidRequest, `No route ${req.method} ${req.url.split('?')[0]}.`) }),
    );
    app.addHook('onRequest', async (req, reply) => {
      // Browsers send Origin; MCP clients (SDKs, Claude Code, Codex) do not. A page on any site could otherwise
      // reach a gateway on the visitor's network through DNS rebinding: only the origins of SVC_MCP_ALLOWED_ORIGINS
      // pass, with CORS headers that let their pages read the session id.
      const origin = header(req, 'origin');
      if (origin !== null) {
        if (!allowedOrigins.has(origin)) {
          void reply.header('connection', 'close');
          throw new RpcRefusal(
            403,
            RPC.forbidden,
            'This Origin is not allowed on /mcp (DNS-rebinding protection; SVC_MCP_ALLOWED_ORIGINS lists the allowed ones).',
          );
        }
        void reply.headers({ 'access-control-allow-origin': origin, vary: 'origin', 'access-control-expose-headers': EXPOSE_HEADERS });
      }
      if (req.method === 'OPTIONS') {
        // A preflight (or a bare OPTIONS): no key is asked for.
        void reply.code(204).header('allow', 'GET, POST, DELETE, OPTIONS');
        if (origin !== null)
          void reply.headers({
            'access-control-allow-methods': 'GET, POST, DELETE',
            'access-control-allow-headers': ALLOW_HEADERS,
            'access-control-max-age': '600',
          });
        return reply.send();
      }
      try {
        const key = await authenticate(req.headers, 'openai', deps.store, deps.pepper, keyCacheOf(deps.store));
        req.mcpCaller = { p: principal(deps.config.current(), key), keyHash: key.hash };
      } catch (err) {
        // The unread body is still on the connection.
        void reply.header('connection', 'close');
        throw err;
      }
    });
    const run = async (req: FastifyRequest, reply: FastifyReply, handle: (ctx: McpContext) => Promise<McpAnswer>): Promise<FastifyReply> => {
      const caller = req.mcpCaller;
      if (!caller) throw new GatewayError('missing_api_key', 'No API key was given: send it as Authorization: Bearer <key>.');
      const watch = watchClient(reply.raw);
      reply.raw.once('close', () => watch.dispose());
      const ctx: McpContext = {
        deps,
        sessions,
        snapshot: deps.config.current(),
        ...caller,
        // A drain that must end the calls in flight ends MCP streams too (a GET stream would otherwise hold it).
        signal: deps.lifecycle ? AbortSignal.any([watch.signal, deps.lifecycle.ending]) : watch.signal,
        headers: { sessionId: header(req, 'mcp-session-id'), protocolVersion: header(req, 'mcp-protocol-version'), lastEventId: header(req, 'last-event-id') },
      };
      const track = (): Promise<McpAnswer> => handle(ctx);
      return sendAnswer(reply, await (deps.lifecycle ? deps.lifecycle.track(track) : track()));
    };
    /** A POST: its one message read, handled, and traced while tracing is on (a refused body is not: no message). */
    const runPost = async (
      req: FastifyRequest,
      reply: FastifyReply,
      server: string | null,
      handle: (ctx: McpContext, m: ClientMessage) => Promise<McpAnswer>,
    ) => {
      const message = readMessage(req.body);
      if (!tracer || !req.mcpCaller) return run(req, reply, (ctx) => handle(ctx, message));
      const trace = tracer.start({
        headers: req.headers,
        message,
        server,
        sessionId: header(req, 'mcp-session-id'),
        protocolVersion: header(req, 'mcp-protocol-version'),
        httpVersion: req.raw.httpVersion,
        account: req.mcpCaller.p.account.name,
        apiKeyName: req.mcpCaller.p.key.name,
      });
      return run(req, reply, async (ctx) => {
        try {
          return trace.end(await handle(ctx, message));
        } catch (err) {
          trace.end(errorAnswer(err as Error));
          throw err;
        }
      });
    };
    const post = { bodyLimit: MCP_BODY_LIMIT };
    app.post('/', post, (req, reply) => runPost(req, reply, null, (ctx, m) => postAll(ctx, m)));
    app.get('/', (req, reply) => run(req, reply, (ctx) => getAll(ctx)));
    app.delete('/', (req, reply) => run(req, reply, (ctx) => deleteAll(ctx)));
    app.post<{ Params: { server: string } }>('/:server', post, (req, reply) =>
      runPost(req, reply, req.params.server, (ctx, m) => postOne(ctx, req.params.server, m)),
    );
    app.get<{ Params: { server: string } }>('/:server', (req, reply) => run(req, reply, (ctx) => getOne(ctx, req.params.server)));
    // Answered by the hook above (preflights); the routes only make OPTIONS a known method here.
    app.options('/', async (_req, reply) => reply.code(204).send());
    app.options('/:server', async (_req, reply) => reply.code(204).send());
    app.delete<{ Params: { server: string } }>('/:server', (req, reply) => run(req, reply, (ctx) => deleteOne(ctx, req.params.server)));
  };
}
