// Names on /mcp: tools as `<prefix>__<tool>`, and the ids of server-to-client requests as `svc~<server>~<id JSON>`
// so the client's answer finds its server again (two servers may use the same id).
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { PREFIX_SEP } from './access.ts';
import type { JsonRpcId } from './jsonrpc.ts';

export function prefixed(server: CompiledMcpServer, tool: string): string {
  return `${server.prefix}${PREFIX_SEP}${tool}`;
}

/** The server whose prefix a `<prefix>__<tool>` name carries, and the tool's own name. */
export function splitName(servers: readonly CompiledMcpServer[], name: string): { server: CompiledMcpServer; tool: string } | null {
  const i = name.indexOf(PREFIX_SEP);
  if (i <= 0) return null;
  const prefix = name.slice(0, i);
  const server = servers.find((s) => s.prefix === prefix);
  return server ? { server, tool: name.slice(i + PREFIX_SEP.length) } : null;
}

const ID_PREFIX = 'svc~';

export function outboundId(server: string, id: unknown): string {
  return `${ID_PREFIX}${server}~${JSON.stringify(id)}`;
}

/** The server and its own id of an id made by outboundId, or null. */
export function inboundId(id: JsonRpcId | null): { server: string; id: JsonRpcId } | null {
  if (typeof id !== 'string' || !id.startsWith(ID_PREFIX)) return null;
  const rest = id.slice(ID_PREFIX.length);
  const i = rest.indexOf('~');
  if (i <= 0) return null;
  try {
    const own: unknown = JSON.parse(rest.slice(i + 1));
    return typeof own === 'string' || typeof own === 'number' ? { server: rest.slice(0, i), id: own } : null;
  } catch {
    return null;
  }
}

/** Resource URIs on /mcp: `svc-mcp://<prefix>/<the server's own URI>` (templates too: the client fills them in). */
const URI_SCHEME = 'svc-mcp://';

export function prefixedUri(server: CompiledMcpServer, uri: string): string {
  return `${URI_SCHEME}${server.prefix}/${uri}`;
}

/** The server a `svc-mcp://<prefix>/<uri>` URI names and its own URI, or null. */
export function splitUri(servers: readonly CompiledMcpServer[], uri: string): { server: CompiledMcpServer; uri: string } | null {
  if (!uri.startsWith(URI_SCHEME)) return null;
  const rest = uri.slice(URI_SCHEME.length);
  const i = rest.indexOf('/');
  if (i <= 0) return null;
  const prefix = rest.slice(0, i);
  const server = servers.find((s) => s.prefix === prefix);
  return server ? { server, uri: rest.slice(i + 1) } : null;
}
