// /mcp: every McpServer the key may use behind one session. initialize opens a session with each (their ids sealed
// in the gateway's Mcp-Session-Id); tools, resources, resource templates and prompts are listed merged under
// /mcp's names (aggregate-names.ts); a request about one of them (tools/call, resources/read, subscribe,
// prompts/get, completion/complete) goes to the server its name or URI leads to, a tools/call admitted and settled
// as on /mcp/<server>; the server's requests on a stream get ids that route the client's answers back;
// notifications and logging/setLevel go to every server; GET merges every server's stream (aggregate-stream.ts);
// DELETE ends every upstream session.
import { serversFor } from './access.ts';
import { LISTS, mergedList, type ListMethod } from './aggregate-lists.ts';
import { promptResult, readResult, serverMessage, toolResult } from './aggregate-names.ts';
import type { McpAnswer } from './answer.ts';
import { chargedHooks, guardedArguments, refusalAnswer, toolOf } from './calls.ts';
import { collect } from './collect.ts';
import type { McpContext } from './context.ts';
import { openSession, post, type Joined } from './joined.ts';
import { RPC, RpcRefusal, type ClientMessage, type JsonRpcRequest } from './jsonrpc.ts';
import { inboundId, splitName, splitUri } from './prefixed.ts';
import { relay, upstreamError, type Message, type RelayHooks } from './relay.ts';
import type { McpSession } from './session-id.ts';
import { callUpstream, UpstreamFailed } from './upstream.ts';

const VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const GATEWAY_INFO = { name: 'svc-gateway', version: '1.0.0' };
/** What /mcp offers: whatever its servers offer, merged (a server without a capability adds nothing to it). */
const CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
};

async function initialize(ctx: McpContext, msg: JsonRpcRequest): Promise<McpAnswer> {
  const asked = String(msg.params?.protocolVersion ?? '');
  const version = VERSIONS.includes(asked) ? asked : '2025-06-18';
  const session: McpSession = { servers: {} };
  await Promise.all(
    serversFor(ctx.snapshot, ctx.p).map(async (server) => {
      try {
        const up = await post(ctx, { server, id: null, version: null }, msg);
        const r = await collect(up, msg.id, server.name);
        const result = r?.result as Message | undefined;
        if (!result) throw new Error(`initialize answered no result (HTTP ${up.status})`);
        const agreed = typeof result.protocolVersion === 'string' ? result.protocolVersion : version;
        session.servers[server.name] = { id: up.sessionId, version: agreed };
      } catch (err) {
        // A server that cannot start a session is left out of it; the others serve.
        ctx.deps.log.warn(
          { server: server.name, error: err instanceof Error ? err.message : String(err) },
          'An McpServer failed initialize; left out of the session',
        );
      }
    }),
  );
  const result = { protocolVersion: version, capabilities: CAPABILITIES, serverInfo: GATEWAY_INFO };
  return { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: msg.id, result }, sessionId: await ctx.sessions.start(session, ctx.keyHash) };
}

/** One request to one server, its answer relayed with the server's own messages under /mcp's names. */
async function forward(ctx: McpContext, j: Joined, msg: JsonRpcRequest, hooks: RelayHooks = {}): Promise<McpAnswer> {
  const all: RelayHooks = { other: serverMessage(j.server), ...hooks };
  let up;
  try {
    up = await post(ctx, j, msg);
  } catch (err) {
    await all.done?.(null);
    if (err instanceof UpstreamFailed) return upstreamError(msg.id, j.server.name, err.message, err.timeout ? 504 : 502);
    throw err;
  }
  return relay(up, msg.id, j.server.name, all);
}

function joinedOf(joined: Joined[], found: { server: unknown } | null): Joined | undefined {
  return found ? joined.find((x) => x.server === found.server) : undefined;
}

async function toolsCall(ctx: McpContext, joined: Joined[], msg: JsonRpcRequest): Promise<McpAnswer> {
  const name = msg.params?.name;
  const found =
    typeof name === 'string'
      ? splitName(
          joined.map((j) => j.server),
          name,
        )
      : null;
  const j = joinedOf(joined, found);
  if (!found || !j) return refusalAnswer(msg.id, new RpcRefusal(200, RPC.invalidParams, `Unknown tool: ${String(name)}`));
  const tool = toolOf(ctx, j.server, found.tool, String(name));
  if (tool instanceof RpcRefusal) return refusalAnswer(msg.id, tool);
  const sent: JsonRpcRequest = { ...msg, params: { ...msg.params, name: tool } };
  const guard = await guardedArguments(ctx, j.server, tool, sent);
  if (guard instanceof RpcRefusal) return refusalAnswer(msg.id, guard);
  const { hooks } = await chargedHooks(ctx, j.server, tool, { response: toolResult(j.server) }, guard);
  return forward(ctx, j, sent, hooks);
}

/** resources/read, resources/subscribe, resources/unsubscribe: to the server the URI names, with its own URI. */
function byUri(ctx: McpContext, joined: Joined[], msg: JsonRpcRequest): Promise<McpAnswer> | McpAnswer {
  const uri = msg.params?.uri;
  const found =
    typeof uri === 'string'
      ? splitUri(
          joined.map((j) => j.server),
          uri,
        )
      : null;
  const j = joinedOf(joined, found);
  // -32002: MCP's "resource not found".
  if (!found || !j) return refusalAnswer(msg.id, new RpcRefusal(200, -32002, `Resource not found: ${String(uri)}`, { data: { uri } }));
  const hooks = msg.method === 'resources/read' ? { response: readResult(j.server) } : {};
  return forward(ctx, j, { ...msg, params: { ...msg.params, uri: found.uri } }, hooks);
}

function promptsGet(ctx: McpContext, joined: Joined[], msg: JsonRpcRequest): Promise<McpAnswer> | McpAnswer {
  const name = msg.params?.name;
  const found =
    typeof name === 'string'
      ? splitName(
          joined.map((j) => j.server),
          name,
        )
      : null;
  const j = joinedOf(joined, found);
  if (!found || !j) return refusalAnswer(msg.id, new RpcRefusal(200, RPC.invalidParams, `Unknown prompt: ${String(name)}`));
  return forward(ctx, j, { ...msg, params: { ...msg.params, name: found.tool } }, { response: promptResult(j.server) });
}

/** completion/complete: to the server of the prompt or resource template its ref names. */
function complete(ctx: McpContext, joined: Joined[], msg: JsonRpcRequest): Promise<McpAnswer> | McpAnswer {
  const ref = msg.params?.ref as Message | undefined;
  const servers = joined.map((j) => j.server);
  let found: { server: Joined['server']; ref: Message } | null = null;
  if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
    const f = splitName(servers, ref.name);
    if (f) found = { server: f.server, ref: { ...ref, name: f.tool } };
  } else if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
    const f = splitUri(servers, ref.uri);
    if (f) found = { server: f.server, ref: { ...ref, uri: f.uri } };
  }
  const j = joinedOf(joined, found);
  if (!found || !j) return refusalAnswer(msg.id, new RpcRefusal(200, RPC.invalidParams, 'params.ref names no prompt or resource template of this session.'));
  return forward(ctx, j, { ...msg, params: { ...msg.params, ref: found.ref } });
}

/** logging/setLevel: to every server; the level is the client's for all of them. */
async function setLevel(ctx: McpContext, joined: Joined[], msg: JsonRpcRequest): Promise<McpAnswer> {
  await Promise.all(joined.map(async (j) => collect(await post(ctx, j, msg), msg.id, j.server.name).catch(() => null)));
  return { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: msg.id, result: {} } };
}

async function fanOut(ctx: McpContext, joined: Joined[], msg: object): Promise<void> {
  await Promise.all(joined.map(async (j) => (await post(ctx, j, msg).catch(() => null))?.body.resume()));
}

export async function postAll(ctx: McpContext, message: ClientMessage): Promise<McpAnswer> {
  const id = message.kind === 'notification' ? null : message.msg.id;
  try {
    if (message.kind === 'request' && message.msg.method === 'initialize') return await initialize(ctx, message.msg);
    const joined = await openSession(ctx);
    switch (message.kind) {
      case 'notification':
        await fanOut(ctx, joined, message.msg);
        return { kind: 'accepted' };
      case 'response': {
        // The client's answer to a server's request: to that server, with the server's own id.
        const back = inboundId(message.msg.id);
        const j = back ? joined.find((x) => x.server.name === back.server) : undefined;
        if (!back || !j) throw new RpcRefusal(400, RPC.invalidRequest, 'This response answers no request of this session.');
        await fanOut(ctx, [j], { ...message.msg, id: back.id });
        return { kind: 'accepted' };
      }
      case 'request':
        return await request(ctx, joined, message.msg);
      default: {
        const never: never = message;
        return never;
      }
    }
  } catch (err) {
    return refusalAnswer(id, err);
  }
}

function request(ctx: McpContext, joined: Joined[], msg: JsonRpcRequest): Promise<McpAnswer> | McpAnswer {
  if (Object.hasOwn(LISTS, msg.method)) return mergedList(ctx, joined, msg.id, msg.method as ListMethod);
  switch (msg.method) {
    case 'ping':
      return { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: msg.id, result: {} } };
    case 'tools/call':
      return toolsCall(ctx, joined, msg);
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return byUri(ctx, joined, msg);
    case 'prompts/get':
      return promptsGet(ctx, joined, msg);
    case 'completion/complete':
      return complete(ctx, joined, msg);
    case 'logging/setLevel':
      return setLevel(ctx, joined, msg);
    default:
      return refusalAnswer(
        msg.id,
        new RpcRefusal(200, RPC.methodNotFound, `Method not found: ${msg.method} (/mcp/<server> serves everything a server offers).`),
      );
  }
}

/** DELETE: ends every upstream session of the client's session. */
export async function deleteAll(ctx: McpContext): Promise<McpAnswer> {
  try {
    const joined = await openSession(ctx);
    await ctx.sessions.end(ctx.headers.sessionId as string, ctx.keyHash);
    await Promise.all(
      joined.map(async (j) => {
        const up = await callUpstream(j.server, { method: 'DELETE', sessionId: j.id, protocolVersion: j.version }, ctx.signal).catch(() => null);
        up?.body.resume();
      }),
    );
    return { kind: 'status', status: 200 };
  } catch (err) {
    return refusalAnswer(null, err);
  }
}
