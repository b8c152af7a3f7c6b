// Requests to an upstream MCP server over Streamable HTTP: its own headers (the credential from its Secret), never
// the client's key or cookies; the connect and first-byte timeouts of its McpServer, and for a POST its total
// timeout; the client's leaving aborts the request (and the upstream sees its connection close).
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { mockAnswer } from './mock-server.ts';
import { tokenRefused, upstreamToken } from './oauth.ts';
import { callSseUpstream } from './upstream-sse.ts';
import { UpstreamFailed, type UpstreamAnswer, type UpstreamRequest } from './upstream-types.ts';

export { UpstreamFailed, type UpstreamAnswer, type UpstreamRequest } from './upstream-types.ts';

/**
 * How long an idle upstream connection is kept for the next request: less than the 5 s after which a Node.js server
 * (most MCP servers, the official SDKs' included) closes an idle connection. Those servers do not advertise it on
 * their SSE answers (they set `Connection: keep-alive` themselves, so Node adds no `Keep-Alive: timeout=5`), and a
 * connection kept longer is sometimes reused just as the server closes it: the call then fails at the socket
 * (ECONNRESET, "other side closed") although the upstream is fine. A server that advertises its idle timeout
 * (`Keep-Alive: timeout=N`) has its connections kept that long less 2 s instead (undici's rule).
 */
export const UPSTREAM_IDLE_MS = 4_000;

const agents = new Map<number, Agent>();

function agent(connectMs: number): Agent {
  let a = agents.get(connectMs);
  if (!a) agents.set(connectMs, (a = new Agent({ connect: { timeout: connectMs }, keepAliveTimeout: UPSTREAM_IDLE_MS, allowH2: false })));
  return a;
}

function headerOf(v: string | string[] | undefined): string | null {
  return (Array.isArray(v) ? v[0] : v) ?? null;
}

/** The OAuth access token of a server with spec.oauth (oauth.ts), or null; a token not obtained fails the call. */
async function bearerOf(server: CompiledMcpServer): Promise<string | null> {
  try {
    return await upstreamToken(server);
  } catch (err) {
    throw new UpstreamFailed(`could not obtain an OAuth token (${(err as Error).message})`, false);
  }
}

export async function callUpstream(server: CompiledMcpServer, req: UpstreamRequest, client: AbortSignal): Promise<UpstreamAnswer> {
  if (server.url === null) return mockAnswer(req);
  const bearer = await bearerOf(server);
  if (server.transport === 'sse') return callSseUpstream(server, req, client, bearer);
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (req.sessionId) headers['mcp-session-id'] = req.sessionId;
  if (req.protocolVersion) headers['mcp-protocol-version'] = req.protocolVersion;
  if (req.lastEventId) headers['last-event-id'] = req.lastEventId;
  for (const h of server.headers) if (h.credential.kind === 'value') headers[h.name.toLowerCase()] = h.credential.value;
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  // A POST's answer (stream included) is bounded by totalMs; a GET stream lives as long as its client.
  const signal = req.method === 'POST' ? AbortSignal.any([client, AbortSignal.timeout(server.timeouts.totalMs)]) : client;
  try {
    const res = await request(server.url, {
      method: req.method,
      headers,
      body: req.body,
      signal,
      dispatcher: agent(server.timeouts.connectMs),
      headersTimeout: server.timeouts.firstByteMs,
      bodyTimeout: 0,
    });
    if (bearer !== null && res.statusCode === 401) tokenRefused(server, bearer);
    return {
      status: res.statusCode,
      contentType: headerOf(res.headers['content-type']) ?? '',
      sessionId: headerOf(res.headers['mcp-session-id']),
      body: res.body,
    };
  } catch (err) {
    if (client.aborted) throw err;
    const code = (err as { code?: string; name?: string }).code ?? (err as { name?: string }).name ?? '';
    const timeout = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'TimeoutError';
    // The message names no URL or header: what the client sees of an upstream is its McpServer name.
    throw new UpstreamFailed(timeout ? 'timed out' : `connection failed (${code || 'error'})`, timeout);
  }
}

/** Reads a whole answer body, refusing one above `max` bytes. */
export async function readText(body: Readable, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of body) {
    const b = Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array);
    n += b.length;
    if (n > max) {
      body.destroy();
      throw new UpstreamFailed(`answer above ${max} bytes`, false);
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}
