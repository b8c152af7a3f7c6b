// The upstream sessions of a /mcp session: the servers the key may use now that the session holds, each with its
// own session id and protocol version, and a POST to one of them.
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { serversFor } from './access.ts';
import type { McpContext } from './context.ts';
import { RPC, RpcRefusal } from './jsonrpc.ts';
import { callUpstream, type UpstreamAnswer } from './upstream.ts';

export interface Joined {
  server: CompiledMcpServer;
  id: string | null;
  version: string | null;
}

/** The session's upstreams the key may still use; a missing, unknown or idle-ended session is refused. */
export async function openSession(ctx: McpContext): Promise<Joined[]> {
  if (ctx.headers.sessionId === null) throw new RpcRefusal(400, RPC.invalidRequest, 'This request needs the Mcp-Session-Id header of an initialized session.');
  const session = await ctx.sessions.use(ctx.headers.sessionId, ctx.keyHash);
  if (!session) throw new RpcRefusal(404, RPC.sessionNotFound, 'Unknown session: send initialize again.');
  const allowed = serversFor(ctx.snapshot, ctx.p);
  return allowed.flatMap((server) => {
    const u = session.servers[server.name];
    return u ? [{ server, id: u.id, version: u.version }] : [];
  });
}

export function post(ctx: McpContext, j: Joined, msg: object): Promise<UpstreamAnswer> {
  return callUpstream(j.server, { method: 'POST', body: JSON.stringify(msg), sessionId: j.id, protocolVersion: j.version }, ctx.signal);
}
