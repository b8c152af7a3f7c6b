// /mcp: every McpServer the key may use behind one session. initialize opens a session with each (their ids sealed
// in the gateway's Mcp-Session-Id), tools/list merges their tools as `<prefix>__<tool>`, tools/call goes to the
// server its prefix names (admitted and settled as on /mcp/<server>), the server's requests on that stream get ids
// that route the client's answers back, notifications go to every server, DELETE ends every upstream session.
// Resources and prompts are not aggregated (the gateway's initialize offers tools only).
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { serversFor } from './access.ts';
import type { McpAnswer } from './answer.ts';
import { chargedHooks, refusalAnswer, toolOf, visibleTools } from './calls.ts';
import { collect } from './collect.ts';
import type { McpContext } from './context.ts';
import { RPC, RpcRefusal, type ClientMessage, type JsonRpcId, type JsonRpcRequest } from './jsonrpc.ts';
import { inboundId, outboundId, prefixed, splitName } from './prefixed.ts';
import { relay, upstreamError, type Message } from './relay.ts';
import type { McpSession } from './session-id.ts';
import { callUpstream, UpstreamFailed, type UpstreamAnswer } from './upstream.ts';

const VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const GATEWAY_INFO = { name: 'svc-gateway', version: '1.0.0' };
/** Pages of one server's tools/list read for one answer (a server with more is cut there). */
const MAX_PAGES = 20;

interface Joined {
  server: CompiledMcpServer;
  id: string | null;
  version: string | null;
}

function open(ctx: McpContext): Joined[] {
  if (ctx.headers.sessionId === null) throw new RpcRefusal(400, RPC.invalidRequest, 'This request needs the Mcp-Session-Id header of an initialized session.');
  const session = ctx.sealer.open(ctx.headers.sessionId, ctx.keyHash);
  if (!session) throw new RpcRefusal(404, RPC.sessionNotFound, 'Unknown session: send initialize again.');
  const allowed = serversFor(ctx.snapshot, ctx.p);
  return allowed.flatMap((server) => {
    const u = session.servers[server.name];
    return u ? [{ server, id: u.id, version: u.version }] : [];
  });
}

function post(ctx: McpContext, j: Joined, msg: object): Promise<UpstreamAnswer> {
  return callUpstream(j.server, { method: 'POST', body: JSON.stringify(msg), sessionId: j.id, protocolVersion: j.version }, ctx.signal);
}

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
  const result = { protocolVersion: version, capabilities: { tools: { listChanged: true } }, serverInfo: GATEWAY_INFO };
  return { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: msg.id, result }, sessionId: ctx.sealer.seal(session, ctx.keyHash) };
}

async function toolsOf(ctx: McpContext, j: Joined, id: JsonRpcId): Promise<Message[]> {
  const out: Message[] = [];
  let cursor: unknown;
  for (let page = 0; page < MAX_PAGES; page++) {
    const params = cursor === undefined ? {} : { cursor };
    const r = await collect(await post(ctx, j, { jsonrpc: '2.0', id, method: 'tools/list', params }), id, j.server.name);
    const result = r?.result as Message | undefined;
    out.push(...visibleTools(ctx, j.server, result?.tools, (n) => prefixed(j.server, n)));
    cursor = result?.nextCursor;
    if (typeof cursor !== 'string') break;
  }
  return out;
}

async function toolsList(ctx: McpContext, joined: Joined[], id: JsonRpcId): Promise<McpAnswer> {
  const lists = await Promise.all(
    joined.map((j) =>
      toolsOf(ctx, j, id).catch((err: unknown) => {
        ctx.deps.log.warn(
          { server: j.server.name, error: err instanceof Error ? err.message : String(err) },
          'An McpServer failed tools/list; its tools left out',
        );
        return [];
      }),
    ),
  );
  return { kind: 'json', status: 200, body: { jsonrpc: '2.0', id, result: { tools: lists.flat() } } };
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
  const j = found ? joined.find((x) => x.server === found.server) : undefined;
  if (!found || !j) return refusalAnswer(msg.id, new RpcRefusal(200, RPC.invalidParams, `Unknown tool: ${String(name)}`));
  const tool = toolOf(ctx, j.server, found.tool, String(name));
  if (tool instanceof RpcRefusal) return refusalAnswer(msg.id, tool);
  const server = j.server.name;
  const { hooks } = await chargedHooks(ctx, j.server, tool, { other: (m) => (m.id === undefined ? m : { ...m, id: outboundId(server, m.id) }) });
  let up;
  try {
    up = await post(ctx, j, { ...msg, params: { ...msg.params, name: tool } });
  } catch (err) {
    await hooks.done?.(null);
    if (err instanceof UpstreamFailed) return upstreamError(msg.id, server, err.message, err.timeout ? 504 : 502);
    throw err;
  }
  return relay(up, msg.id, server, hooks);
}

async function fanOut(ctx: McpContext, joined: Joined[], msg: object): Promise<void> {
  await Promise.all(joined.map(async (j) => (await post(ctx, j, msg).catch(() => null))?.body.resume()));
}

export async function postAll(ctx: McpContext, message: ClientMessage): Promise<McpAnswer> {
  const id = message.kind === 'notification' ? null : message.msg.id;
  try {
    if (message.kind === 'request' && message.msg.method === 'initialize') return await initialize(ctx, message.msg);
    const joined = open(ctx);
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
  switch (msg.method) {
    case 'ping':
      return { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: msg.id, result: {} } };
    case 'tools/list':
      return toolsList(ctx, joined, msg.id);
    case 'tools/call':
      return toolsCall(ctx, joined, msg);
    default:
      return refusalAnswer(
        msg.id,
        new RpcRefusal(200, RPC.methodNotFound, `Method not found: ${msg.method} (/mcp offers tools; /mcp/<server> serves everything a server offers).`),
      );
  }
}

/** DELETE: ends every upstream session of the client's session. */
export async function deleteAll(ctx: McpContext): Promise<McpAnswer> {
  try {
    const joined = open(ctx);
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
