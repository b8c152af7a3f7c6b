// The per-method pieces both endpoints share: tools/list filtered to what the key may use, a tools/call checked,
// admitted and settled, an admission refusal as a JSON-RPC error.
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import { mayUseTool } from './access.ts';
import type { McpAnswer } from './answer.ts';
import { admitToolCall, type SettleTool } from './charge.ts';
import { recordBlocked, toolGuardFor, type ToolGuard } from './guard.ts';
import type { McpContext } from './context.ts';
import { RPC, RpcRefusal, rpcError, type JsonRpcId, type JsonRpcRequest } from './jsonrpc.ts';
import type { Message, RelayHooks } from './relay.ts';

/** The tools of a tools/list answer this key may use, each renamed by `rename` (the /mcp prefix). */
export function visibleTools(ctx: McpContext, server: CompiledMcpServer, tools: unknown, rename?: (n: string) => string): Message[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter((t): t is Message => typeof t === 'object' && t !== null && typeof (t as Message).name === 'string')
    .filter((t) => mayUseTool(ctx.p, server, t.name as string))
    .map((t) => (rename ? { ...t, name: rename(t.name as string) } : t));
}

/** A tools/list response with the tools the key may not use left out. */
export function filterToolsList(ctx: McpContext, server: CompiledMcpServer): (m: Message) => Message {
  return (m) => {
    const result = m.result as Message | undefined;
    if (!result || typeof result !== 'object') return m;
    return { ...m, result: { ...result, tools: visibleTools(ctx, server, result.tools) } };
  };
}

/** The tool named by a tools/call, or the JSON-RPC error the client gets (a hidden tool is an unknown one). */
export function toolOf(ctx: McpContext, server: CompiledMcpServer, name: unknown, shown: string): string | RpcRefusal {
  if (typeof name !== 'string' || name.length === 0 || name.length > 128)
    return new RpcRefusal(200, RPC.invalidParams, 'params.name must be a tool name of 1 to 128 characters.');
  if (!mayUseTool(ctx.p, server, name)) return new RpcRefusal(200, RPC.invalidParams, `Unknown tool: ${shown}`);
  return name;
}

/** Admits the call; the hooks settle it once its answer is over (the price if the tool answered without isError). */
export async function chargedHooks(
  ctx: McpContext,
  server: CompiledMcpServer,
  tool: string,
  hooks: RelayHooks = {},
  guard: ToolGuard | null = null,
): Promise<{ hooks: RelayHooks; settle: SettleTool }> {
  const settle = await admitToolCall(ctx.deps, ctx.p, server, tool, guard?.facts);
  const done = async (m: Message | null): Promise<void> => {
    if (!m) return settle({ ok: false, status: 502, errorCode: 'upstream_error' });
    // A result a Guardrail blocked: named so, charged nothing (the client never had it).
    if (guard?.blocked) return settle({ ok: false, status: 400, errorCode: 'content_blocked' });
    if (m.error !== undefined) return settle({ ok: false, status: 200, errorCode: 'tool_error' });
    const isError = (m.result as Message | undefined)?.isError === true;
    return settle(isError ? { ok: false, status: 200, errorCode: 'tool_error' } : { ok: true });
  };
  const inner = hooks.response;
  const response = guard ? (m: Message): Message => guard.response(inner ? inner(m) : m) : inner;
  return { hooks: { ...hooks, ...(response ? { response } : {}), done }, settle };
}

/** A refusal as the answer: a missing or bad key stays an HTTP 401; limits and money are JSON-RPC errors in a 200. */
export function refusalAnswer(id: JsonRpcId | null, err: unknown): McpAnswer {
  if (err instanceof RpcRefusal)
    return { kind: 'json', status: err.status, body: rpcError(id, err.code, err.message, err.data), retryAfterSec: err.retryAfterSec };
  if (!(err instanceof GatewayError)) throw err;
  if (err.status === 401) return { kind: 'json', status: 401, body: rpcError(id, RPC.unauthorized, err.message, { type: err.code }) };
  // The gateway's own trouble (its store unreachable, shutting down) keeps its HTTP status.
  if (err.status >= 500)
    return { kind: 'json', status: err.status, body: rpcError(id, RPC.internalError, err.message, { type: err.code }), retryAfterSec: err.retryAfterSec };
  return {
    kind: 'json',
    status: 200,
    body: rpcError(id, err.status === 403 ? RPC.forbidden : RPC.limited, err.message, { type: err.code, status: err.status }),
    retryAfterSec: err.retryAfterSec,
  };
}

/**
 * A tools/call's arguments through the Guardrails that cover it (guard.ts): masked in place (the message is the
 * client's own copy), its guard returned; a block recorded and returned as the refusal; null when none covers it.
 */
export async function guardedArguments(ctx: McpContext, server: CompiledMcpServer, tool: string, msg: JsonRpcRequest): Promise<ToolGuard | RpcRefusal | null> {
  const guard = toolGuardFor(ctx, server, tool);
  if (!guard || !msg.params) return guard;
  const refused = guard.request(msg.params);
  if (!refused) return guard;
  await recordBlocked(ctx, server, tool, guard);
  return refused;
}
