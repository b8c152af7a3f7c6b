// The exact-match response cache (docs/billing.md: Response cache): whether a call may be read from or written to
// the cache, its key, the entry it stores, and what a hit costs. No I/O here: cache-run.ts does the reads and writes.
//
// Key: sha256 over the canonical JSON (object keys sorted at every level) of the account, the endpoint and dialect,
// stream or not, the model id the route resolves to with its targets' upstream models, and the whole request body
// but its `model` and `stream` (every sampling parameter included). The API key is not in it (one account's keys
// share its entries) and the account always is (no entry is ever served to another account); nothing else of the
// request (headers, the key) is in the key or the entry. Stream and non-stream answers are cached apart: a
// streamed request is answered with the stream first served, byte for byte.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../contract/canonical-json.ts';
import type { CompiledModel } from '../contract/snapshot.ts';
import type { Usage } from '../translate/types.ts';
import type { CallSpec } from './call-spec.ts';

/** Answer header: hit, miss or bypass; request header: `force` caches a sampled call where the route has a cache. */
export const CACHE_HEADER = 'x-svc-cache';
/** The x-svc-upstream of an answer from the cache. */
export const CACHE_UPSTREAM = 'cache';

export type CachePlan =
  | { state: 'bypass'; model: string; why: BypassReason }
  | { state: 'lookup'; model: string; sha: string; read: boolean; write: boolean; ttlMs: number; maxEntryBytes: number; hitCostPpm: number };

export type BypassReason = 'no-store' | 'sampling' | 'not-cacheable';

type Headers = Record<string, string | string[] | undefined>;

function headerText(h: string | string[] | undefined): string {
  return (Array.isArray(h) ? h.join(',') : (h ?? '')).toLowerCase();
}

/** Cache-Control directives of the request and their values (RFC 9111: comma-separated, case-insensitive). */
function directives(h: string | string[] | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of headerText(h).split(',')) {
    const [name = '', value = ''] = d.split('=', 2).map((x) => x.trim());
    if (name !== '') out.set(name, value.replace(/^"(.*)"$/, '$1'));
  }
  return out;
}

/**
 * Whether the client refuses a stored answer (RFC 9111 5.2.1): `no-cache`, or `max-age=0` (no stored answer is
 * that fresh); without Cache-Control, HTTP/1.0's `Pragma: no-cache` says the same (5.4: Cache-Control wins).
 */
function refusesStored(cc: Map<string, string>, headers: Headers): boolean {
  if (cc.has('no-cache') || /^0+$/.test(cc.get('max-age') ?? '')) return true;
  return headers['cache-control'] === undefined && directives(headers.pragma).has('no-cache');
}

/**
 * Whether the call samples: a temperature above 0, or none (OpenAI's and Anthropic's default is 1), or more than
 * one choice. Embeddings, reranks and moderations never sample.
 */
export function samples(spec: CallSpec, body: Readonly<Record<string, unknown>>): boolean {
  if (spec.modelType === 'embeddings' || spec.modelType === 'rerank' || spec.modelType === 'moderation') return false;
  if ((spec.choices ?? 1) > 1) return true;
  const t = body.temperature;
  return !(typeof t === 'number' && t === 0);
}

/** What the cache does for this call; null: the route has no cache (no x-svc-cache header, no cache field). */
export function cachePlan(spec: CallSpec, model: CompiledModel | undefined, account: string, headers: Headers): CachePlan | null {
  const c = model?.cache;
  if (!c || !model) return null;
  const body = spec.cacheBody;
  if (!body) return { state: 'bypass', model: model.id, why: 'not-cacheable' };
  const cc = directives(headers['cache-control']);
  if (cc.has('no-store')) return { state: 'bypass', model: model.id, why: 'no-store' };
  const force = headerText(headers[CACHE_HEADER]).trim() === 'force';
  if (samples(spec, body) && !c.allowSampling && !force) return { state: 'bypass', model: model.id, why: 'sampling' };
  return {
    state: 'lookup',
    model: model.id,
    sha: cacheKey(spec, model, account, body),
    read: !refusesStored(cc, headers),
    write: c.maxEntryBytes > 0,
    ttlMs: c.ttlSeconds * 1000,
    maxEntryBytes: c.maxEntryBytes,
    hitCostPpm: c.hitCostPpm,
  };
}

export function cacheKey(spec: CallSpec, model: CompiledModel, account: string, body: Readonly<Record<string, unknown>>): string {
  const { model: _requested, stream: _stream, ...rest } = body;
  const form = {
    v: 1,
    account,
    endpoint: spec.endpoint,
    dialect: spec.dialect,
    stream: spec.stream,
    model: model.id,
    upstream: model.targets.map((t) => `${t.provider}:${t.upstreamModel}`),
    body: rest,
    vary: spec.cacheVary ?? null,
  };
  return createHash('sha256').update(canonicalJson(form)).digest('hex');
}

/** What an entry holds: the answer as the client got it, and the call's usage and cost. Nothing else. */
export interface CacheEntry {
  v: 1;
  kind: 'json' | 'stream';
  /** The JSON body, or the whole event stream as written to the client. */
  body: string;
  servedModel: string;
  usage: Usage;
  /** What the original call was charged (nano-USD). */
  costNano: number;
  /** Hosted tools the original upstream request left out (its x-svc-dropped-tools). */
  droppedTools?: string[];
}

export function encodeEntry(e: CacheEntry): string {
  return JSON.stringify(e);
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/** An entry read back; null when it is not one this version wrote (a miss, never an error). */
export function decodeEntry(text: string): CacheEntry | null {
  let e: Partial<CacheEntry>;
  try {
    e = JSON.parse(text) as Partial<CacheEntry>;
  } catch {
    return null;
  }
  const u = e.usage;
  if (e.v !== 1 || (e.kind !== 'json' && e.kind !== 'stream') || typeof e.body !== 'string' || typeof e.servedModel !== 'string') return null;
  if (!u || !isCount(u.inputTokens) || !isCount(u.outputTokens) || !isCount(u.cacheReadTokens) || !isCount(u.cacheWriteTokens)) return null;
  if (!isCount(e.costNano)) return null;
  return e as CacheEntry;
}

/**
 * A hit's cost: floor(original x ppm / 1 000 000) in integer nano-USD (rounded down: a hit is never charged more than
 * its share), and what it saved (original - cost). Exact for any original up to 2^53 (BigInt).
 */
export function hitCost(originalNano: number, ppm: number): { costNano: number; savedNano: number } {
  const cost = Number((BigInt(originalNano) * BigInt(ppm)) / 1_000_000n);
  return { costNano: cost, savedNano: originalNano - cost };
}
