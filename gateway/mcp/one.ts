// /mcp/<server>: one McpServer with its own tool names. Each request goes to the upstream with the upstream's own
// session id (sealed in the gateway's), its answer relayed; tools/list is filtered to what the key may use, and a
// tools/call is refused for a hidden tool, else admitted and settled (calls.ts).
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { entryOf } from '../contract/snapshot.ts';
import { mayUseServer } from './access.ts';
import type { McpAnswer } from './answer.ts';
import { chargedHooks, filterToolsList, guardedArguments, refusalAnswer, toolOf } from './calls.ts';
import type { McpContext } from './context.ts';
import { RPC, RpcRefusal, type ClientMessage, type JsonRpcId } from './jsonrpc.ts';
import { relay, upstreamError, type RelayHooks } from './relay.ts';
import { callUpstream, UpstreamFailed, type UpstreamRequest } from './upstream.ts';

export function serverFor(ctx: McpContext, name: string): CompiledMcpServer {
  const server = entryOf(ctx.snapshot.mcpServers ?? {}, name);
  if (!server) throw new RpcRefusal(404, RPC.invalidRequest, `No McpServer ${name} is served here.`);
  if (!mayUseServer(ctx.p, server)) throw new RpcRefusal(403, RPC.forbidden, `This API key may not use the McpServer ${name}.`);
  return server;
}

/** The upstream's own session id of the client's session (null: none yet, or an upstream that keeps none). */
async function upstreamSession(ctx: McpContext, server: CompiledMcpServer, required: boolean): Promise<string | null> {
  const id = ctx.headers.sessionId;
  if (id === null) {
    if (required) throw new RpcRefusal(400, RPC.invalidRequest, 'This request needs the Mcp-Session-Id header of an initialized session.');
    return null;
  }
  const u = (await ctx.sessions.use(id, ctx.keyHash))?.servers[server.name];
  if (!u) throw new RpcRefusal(404, RPC.sessionNotFound, 'Unknown session: send initialize again.');
  return u.id;
}

interface Forward {
  server: CompiledMcpServer;
  req: UpstreamRequest;
  id: JsonRpcId | null;
  hooks: RelayHooks;
  /** The gateway's session id to send back, given the upstream's (initialize only). */
  sessionOut?: (upstreamId: string | null) => Promise<string | undefined>;
}

async function send(ctx: McpContext, f: Forward): Promise<McpAnswer> {
  let up;
  try {
    up = await callUpstream(f.server, f.req, ctx.signal);
  } catch (err) {
    await f.hooks.done?.(null);
    if (err instanceof UpstreamFailed) return upstreamError(f.id, f.server.name, err.message, err.timeout ? 504 : 502);
    throw err;
  }
  return relay(up, f.id, f.server.name, f.hooks, await f.sessionOut?.(up.sessionId));
}

export async function postOne(ctx: McpContext, name: string, message: ClientMessage): Promise<McpAnswer> {
  const id = message.kind === 'notification' ? null : message.msg.id;
  try {
    const server = serverFor(ctx, name);
    const initialize = message.kind === 'request' && message.msg.method === 'initialize';
    const sessionId = initialize ? null : await upstreamSession(ctx, server, false);
    let hooks: RelayHooks = {};
    if (message.kind === 'request' && message.msg.method === 'tools/list') hooks = { response: filterToolsList(ctx, server) };
    if (message.kind === 'request' && message.msg.method === 'tools/call') {
      const tool = toolOf(ctx, server, message.msg.params?.name, String(message.msg.params?.name));
      if (tool instanceof RpcRefusal) return refusalAnswer(id, tool);
      const guard = await guardedArguments(ctx, server, tool, message.msg);
      if (guard instanceof RpcRefusal) return refusalAnswer(id, guard);
      hooks = (await chargedHooks(ctx, server, tool, {}, guard)).hooks;
    }
    // After the guardrails: the arguments the upstream gets may have been masked.
    const req: UpstreamRequest = { method: 'POST', body: JSON.stringify(message.msg), sessionId, protocolVersion: ctx.headers.protocolVersion };
    const seal = async (upstreamId: string | null): Promise<string | undefined> =>
      initialize && upstreamId !== null ? ctx.sessions.start({ servers: { [server.name]: { id: upstreamId, version: null } } }, ctx.keyHash) : undefined;
    return await send(ctx, { server, req, id, hooks, sessionOut: seal });
  } catch (err) {
    return refusalAnswer(id, err);
  }
}

/** GET: the upstream's stream of server-to-client messages (resumed from Last-Event-ID), or its 405. */
export async function getOne(ctx: McpContext, name: string): Promise<McpAnswer> {
  try {
    const server = serverFor(ctx, name);
    const sessionId = await upstreamSession(ctx, server, false);
    const lastEventId = ctx.headers.lastEventId ?? undefined;
    return await send(ctx, { server, req: { method: 'GET', sessionId, protocolVersion: ctx.headers.protocolVersion, lastEventId }, id: null, hooks: {} });
  } catch (err) {
    return refusalAnswer(null, err);
  }
}

/** DELETE: ends the upstream session. */
export async function deleteOne(ctx: McpContext, name: string): Promise<McpAnswer> {
  try {
    const server = serverFor(ctx, name);
    const sessionId = await upstreamSession(ctx, server, true);
    await ctx.sessions.end(ctx.headers.sessionId as string, ctx.keyHash);
    const up = await callUpstream(server, { method: 'DELETE', sessionId, protocolVersion: ctx.headers.protocolVersion }, ctx.signal);
    up.body.resume();
    return {
      kind: 'status',
      status: up.status >= 200 && up.status < 300 ? 200 : up.status === 404 ? 404 : 405,
      ...(up.status === 405 ? { allow: 'POST, GET' } : {}),
    };
  } catch (err) {
    if (err instanceof UpstreamFailed) return upstreamError(null, name, err.message, err.timeout ? 504 : 502);
    return refusalAnswer(null, err);
  }
}
