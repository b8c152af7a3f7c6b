// The items of a stored conversation, pure: the input a call adds (each item given an id, as OpenAI lists them), the
// whole input rebuilt from a previous_response_id chain for an upstream that holds nothing, item_reference items
// resolved from that chain, and a page of input_items.
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors/catalog.ts';
import { isObject, type Json } from '../translate/json-read.ts';
import type { StoredResponse } from './types.ts';

/**
 * Ids the gateway gives: `<prefix>_svc<hex>`, so they are told apart from an upstream's own and never sent to it. The
 * first 12 hex digits are the wall-clock ms of minting (mintedAt), the other 28 random (112 bits).
 */
export function mintId(prefix: string, at: number = Date.now()): string {
  return `${prefix}_svc${Math.max(0, Math.floor(at)).toString(16).padStart(12, '0').slice(-12)}${randomBytes(14).toString('hex')}`;
}

/** When a gateway id was minted (wall-clock ms), or null for any other id. */
export function mintedAt(id: string): number | null {
  const m = /^[a-z]+_svc([0-9a-f]{12})[0-9a-f]{28}$/.exec(id);
  return m ? parseInt(m[1] as string, 16) : null;
}

const MINTED = /^[a-z]+_svc[0-9a-f]{40}$/;
const ID_PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco' };

function parts(role: unknown, content: unknown): unknown {
  if (typeof content !== 'string') return content;
  return role === 'assistant' ? [{ type: 'output_text', text: content, annotations: [] }] : [{ type: 'input_text', text: content }];
}

/** The input of a call as stored and listed: a string is one user message; each item has an id and a status. */
export function normalizeInput(input: unknown): Json[] {
  const list: unknown[] = typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : Array.isArray(input) ? input : [];
  return list.filter(isObject).map((raw) => {
    const type = typeof raw.type === 'string' ? raw.type : 'message';
    const item: Json = { ...raw, type };
    if (type === 'message') item.content = parts(raw.role, raw.content);
    if (typeof item.id !== 'string') item.id = mintId(ID_PREFIX[type] ?? 'item');
    if (item.status === undefined && type in ID_PREFIX) item.status = 'completed';
    return item;
  });
}

/** An item as sent upstream: without an id the gateway gave (no upstream knows it). */
function upstreamItem(item: Json): Json {
  if (typeof item.id !== 'string' || !MINTED.test(item.id)) return item;
  const { id: _id, ...rest } = item;
  return rest;
}

/** The items of a chain (oldest first), as they make the context of the response that follows it. */
export function chainItems(chain: readonly StoredResponse[]): Json[] {
  const out: Json[] = [];
  for (const r of chain) {
    out.push(...r.input);
    if (Array.isArray(r.response.output)) out.push(...r.response.output.filter(isObject));
  }
  return out;
}

/** A call's input with each item_reference replaced by the item it names (from the chain's items). */
export function resolveReferences(input: unknown, known: readonly Json[]): unknown {
  if (!Array.isArray(input)) return input;
  const byId = new Map(known.filter((x) => typeof x.id === 'string').map((x) => [x.id as string, x]));
  return input.map((item, i) => {
    if (!isObject(item) || item.type !== 'item_reference') return item;
    const found = typeof item.id === 'string' ? byId.get(item.id) : undefined;
    if (!found) {
      throw new GatewayError(
        'invalid_request',
        `input[${i}]: item_reference ${JSON.stringify(item.id)} is not an item of this conversation (the previous_response_id chain)`,
        { param: `input[${i}]` },
      );
    }
    return found;
  });
}

/** The whole input an upstream gets: the chain's items, then this call's input (references resolved). */
export function rebuiltInput(chain: readonly StoredResponse[], input: unknown): Json[] {
  const before = chainItems(chain);
  const own = resolveReferences(typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input, before);
  return [...before, ...(Array.isArray(own) ? own.filter(isObject) : [])].map(upstreamItem);
}

export interface PageQuery {
  order: 'asc' | 'desc';
  after?: string;
  limit: number;
}

/** OpenAI's list object over items (the `after` item excluded), in the order asked. */
export function itemsPage(items: readonly Json[], q: PageQuery): Json {
  const ordered = q.order === 'asc' ? [...items] : [...items].reverse();
  const start = q.after === undefined ? 0 : ordered.findIndex((x) => x.id === q.after) + 1;
  if (q.after !== undefined && start === 0)
    throw new GatewayError('invalid_request', `after: no item ${JSON.stringify(q.after)} in this list`, { param: 'after' });
  const data = ordered.slice(start, start + q.limit);
  const id = (x: Json | undefined): string | null => (x && typeof x.id === 'string' ? x.id : null);
  return { object: 'list', data, has_more: start + q.limit < ordered.length, first_id: id(data[0]), last_id: id(data.at(-1)) };
}
