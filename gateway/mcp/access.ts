// Who may use which MCP server and tool, and what a tools/call costs: the server's own include/exclude, then the
// plan's and the key's spec.mcp (globs over server names and "<server>/<tool>"). Pure; no I/O.
import { matchesAny } from '../contract/model-match.ts';
import type { CompiledMcpAccess, CompiledMcpServer, Snapshot } from '../contract/snapshot.ts';
import type { Principal } from '../pipeline/resolve.ts';

function allowsServer(a: CompiledMcpAccess | undefined, server: string): boolean {
  return !a?.servers || matchesAny(a.servers, server);
}

function allowsTool(a: CompiledMcpAccess | undefined, server: string, tool: string): boolean {
  return !a?.tools || matchesAny(a.tools, `${server}/${tool}`);
}

export function mayUseServer(p: Principal, server: CompiledMcpServer): boolean {
  return allowsServer(p.plan.mcp, server.name) && allowsServer(p.key.mcp, server.name);
}

/** A tool this key sees and may call: offered by the server and open to the plan and the key. */
export function mayUseTool(p: Principal, server: CompiledMcpServer, tool: string): boolean {
  if (!matchesAny(server.include, tool) || matchesAny(server.exclude, tool)) return false;
  return allowsTool(p.plan.mcp, server.name, tool) && allowsTool(p.key.mcp, server.name, tool);
}

/** Every server the key may use, by name order (the snapshot's order is its compile's: sorted). */
export function serversFor(snapshot: Snapshot, p: Principal): CompiledMcpServer[] {
  return Object.values(snapshot.mcpServers ?? {}).filter((s) => mayUseServer(p, s));
}

/** The price of one call of `tool` (nano-USD): its own price if it has one, else the server's per-call price. */
export function toolPriceNano(server: CompiledMcpServer, tool: string): number {
  return Object.hasOwn(server.toolNano, tool) ? (server.toolNano[tool] as number) : server.perCallNano;
}

/** The separator of `<prefix>__<tool>` on /mcp. */
export const PREFIX_SEP = '__';
