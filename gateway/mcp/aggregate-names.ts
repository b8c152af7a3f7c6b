// What /mcp rewrites in the messages of its servers so that names stay unique across them and lead back to their
// server: tools, prompts and resources named `<prefix>__<name>`, resource URIs (and templates) as
// `svc-mcp://<prefix>/<uri>`, ids of a server's own requests as `svc~<server>~<id>` (prefixed.ts).
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { outboundId, prefixed, prefixedUri } from './prefixed.ts';
import type { Message } from './relay.ts';

const isObject = (v: unknown): v is Message => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An item of resources/list, resources/templates/list or prompts/list as /mcp lists it. */
export function listedItem(server: CompiledMcpServer, field: 'resources' | 'resourceTemplates' | 'prompts', item: Message): Message | null {
  if (typeof item.name !== 'string') return null;
  const named = { ...item, name: prefixed(server, item.name) };
  if (field === 'prompts') return named;
  const uriField = field === 'resources' ? 'uri' : 'uriTemplate';
  const uri = item[uriField];
  return typeof uri === 'string' ? { ...named, [uriField]: prefixedUri(server, uri) } : null;
}

/** One content block (of a tool's result, a prompt's message): the URI of a resource link or embedded resource. */
function block(server: CompiledMcpServer, c: unknown): unknown {
  if (!isObject(c)) return c;
  if (c.type === 'resource_link' && typeof c.uri === 'string') return { ...c, uri: prefixedUri(server, c.uri) };
  if (c.type === 'resource' && isObject(c.resource) && typeof c.resource.uri === 'string')
    return { ...c, resource: { ...c.resource, uri: prefixedUri(server, c.resource.uri) } };
  return c;
}

function blocks(server: CompiledMcpServer, content: unknown): unknown {
  return Array.isArray(content) ? content.map((c) => block(server, c)) : block(server, content);
}

/** A response's result rewritten by `fn` (errors pass as they are). */
function inResult(m: Message, fn: (r: Message) => Message): Message {
  return isObject(m.result) ? { ...m, result: fn(m.result) } : m;
}

/** tools/call's result: resource links and embedded resources carry /mcp's URIs. */
export function toolResult(server: CompiledMcpServer): (m: Message) => Message {
  return (m) => inResult(m, (r) => (r.content === undefined ? r : { ...r, content: blocks(server, r.content) }));
}

/** prompts/get's result: each message's content likewise. */
export function promptResult(server: CompiledMcpServer): (m: Message) => Message {
  return (m) =>
    inResult(m, (r) =>
      Array.isArray(r.messages) ? { ...r, messages: r.messages.map((x) => (isObject(x) ? { ...x, content: blocks(server, x.content) } : x)) } : r,
    );
}

/** resources/read's result: each content's URI. */
export function readResult(server: CompiledMcpServer): (m: Message) => Message {
  return (m) =>
    inResult(m, (r) =>
      Array.isArray(r.contents)
        ? { ...r, contents: r.contents.map((c) => (isObject(c) && typeof c.uri === 'string' ? { ...c, uri: prefixedUri(server, c.uri) } : c)) }
        : r,
    );
}

/**
 * A server's own message on /mcp (on a POST's stream or the GET stream): its requests' ids lead back to it, a
 * resource update names /mcp's URI, a log message without a logger names its server's prefix.
 */
export function serverMessage(server: CompiledMcpServer): (m: Message) => Message {
  return (m) => {
    if (m.id !== undefined) return { ...m, id: outboundId(server.name, m.id) };
    const params = isObject(m.params) ? m.params : undefined;
    if (m.method === 'notifications/resources/updated' && typeof params?.uri === 'string')
      return { ...m, params: { ...params, uri: prefixedUri(server, params.uri) } };
    if (m.method === 'notifications/message' && params && params.logger === undefined) return { ...m, params: { ...params, logger: server.prefix } };
    return m;
  };
}
