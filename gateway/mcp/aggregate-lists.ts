// /mcp's list methods: every joined server's list (all its pages, read in parallel across servers) merged into one
// answer with /mcp's names. A server that fails its list is left out of the answer (and logged); the others serve.
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { listedItem } from './aggregate-names.ts';
import type { McpAnswer } from './answer.ts';
import { visibleTools } from './calls.ts';
import { collect } from './collect.ts';
import type { McpContext } from './context.ts';
import { post, type Joined } from './joined.ts';
import { RPC, type JsonRpcId } from './jsonrpc.ts';
import { prefixed } from './prefixed.ts';
import type { Message } from './relay.ts';

/** Pages of one server's list read for one answer (a server with more is cut there). */
const MAX_PAGES = 20;

/** The list methods /mcp merges, with the field of their result that holds the items. */
export const LISTS = {
  'tools/list': 'tools',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
  'prompts/list': 'prompts',
} as const;

export type ListMethod = keyof typeof LISTS;

function itemsOf(ctx: McpContext, server: CompiledMcpServer, method: ListMethod, items: unknown): Message[] {
  const field = LISTS[method];
  if (field === 'tools') return visibleTools(ctx, server, items, (n) => prefixed(server, n));
  if (!Array.isArray(items)) return [];
  return items.flatMap((i) => {
    const item = typeof i === 'object' && i !== null ? listedItem(server, field, i as Message) : null;
    return item ? [item] : [];
  });
}

async function pagesOf(ctx: McpContext, j: Joined, id: JsonRpcId, method: ListMethod): Promise<Message[]> {
  const out: Message[] = [];
  let cursor: unknown;
  for (let page = 0; page < MAX_PAGES; page++) {
    const params = cursor === undefined ? {} : { cursor };
    const r = await collect(await post(ctx, j, { jsonrpc: '2.0', id, method, params }), id, j.server.name);
    // A server that offers no such list (no prompts, say) has nothing to add.
    if ((r?.error as Message | undefined)?.code === RPC.methodNotFound) return out;
    if (r?.error !== undefined) throw new Error(`${method} answered error ${JSON.stringify(r.error).slice(0, 200)}`);
    const result = r?.result as Message | undefined;
    out.push(...itemsOf(ctx, j.server, method, result?.[LISTS[method]]));
    cursor = result?.nextCursor;
    if (typeof cursor !== 'string') break;
  }
  return out;
}

export async function mergedList(ctx: McpContext, joined: Joined[], id: JsonRpcId, method: ListMethod): Promise<McpAnswer> {
  const lists = await Promise.all(
    joined.map((j) =>
      pagesOf(ctx, j, id, method).catch((err: unknown) => {
        ctx.deps.log.warn({ server: j.server.name, method, error: err instanceof Error ? err.message : String(err) }, 'An McpServer failed a list; left out');
        return [];
      }),
    ),
  );
  return { kind: 'json', status: 200, body: { jsonrpc: '2.0', id, result: { [LISTS[method]]: lists.flat() } } };
}
