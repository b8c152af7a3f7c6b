// The response cache on the call path: the read before admission, the answer of a hit, the capture of a miss's
// answer and its write after settlement. A cache that fails (Redis erroring, an unreadable entry) never fails the
// call: the call goes on uncached and the failure is counted (svc_gateway_cache_errors_total).
import { DEFAULT_CACHE_ACCOUNT_BYTES } from '../state/response-cache.ts';
import type { UsageEvent } from '../usage/event.ts';
import { CACHE_HEADER, CACHE_UPSTREAM, decodeEntry, encodeEntry, type CacheEntry, type CachePlan } from './cache.ts';
import type { GatewayDeps } from './context.ts';
import type { Settle } from './settle.ts';
import type { CallSignal } from './signals.ts';
import type { CallSink, StreamWriter } from './sink.ts';

type Lookup = Extract<CachePlan, { state: 'lookup' }>;

/** The entry for this call, or null (none, not read, or the cache failed). */
export async function readCache(deps: GatewayDeps, account: string, plan: Lookup): Promise<CacheEntry | null> {
  const cache = deps.store.responseCache;
  if (!plan.read || !cache) return null;
  let text: string | null;
  try {
    text = await cache.get(account, plan.sha, deps.now());
  } catch (err) {
    deps.metrics.cache?.(plan.model, 'error');
    deps.log.warn({ err }, 'Response cache read failed; the call goes on uncached');
    return null;
  }
  if (text === null) return null;
  const entry = decodeEntry(text);
  if (!entry) deps.metrics.cache?.(plan.model, 'error');
  return entry;
}

/** The headers of an answer from the cache. */
export function hitHeaders(requestedModel: string, entry: CacheEntry): Record<string, string> {
  const h: Record<string, string> = {
    'x-svc-original-model': requestedModel,
    'x-svc-fallback': 'false',
    'x-svc-upstream': CACHE_UPSTREAM,
    'x-svc-served-model': entry.servedModel,
    [CACHE_HEADER]: 'hit',
  };
  if (entry.droppedTools && entry.droppedTools.length > 0) h['x-svc-dropped-tools'] = entry.droppedTools.join(', ');
  return h;
}

/**
 * Answers a hit, as the original answer (a JSON body, or the same event stream), and settles it with the usage the
 * original call reported. The client gone before the end: settled as 499, like any call.
 */
export async function serveHit(
  deps: GatewayDeps,
  hit: { requestedModel: string; entry: CacheEntry; settle: Settle },
  sig: CallSignal,
  sink: CallSink,
): Promise<void> {
  const { entry, settle } = hit;
  const started = deps.now();
  const headers = hitHeaders(hit.requestedModel, entry);
  const note = { servedModel: entry.servedModel };
  const served = (): Promise<unknown> =>
    settle({ status: 200, errorCode: null, route: null, usage: entry.usage, ttftMs: deps.now() - started, contacted: false, hit: note });
  if (entry.kind === 'json') {
    // With SVC_SETTLE_DURABILITY the sink holds the answer until the settle is done (settle-gate.ts).
    sink.json(200, headers, entry.body);
    await served();
    return;
  }
  const w = sink.stream(headers);
  const wait = w.write(entry.body);
  if (wait) await wait;
  if (sig.clientGone() || w.destroyed) {
    await settle({ status: 499, errorCode: 'client_closed', route: null, usage: entry.usage, ttftMs: null, contacted: false, hit: note });
    return;
  }
  // The stored stream is written whole (its final event included); with SVC_SETTLE_DURABILITY the sink closes the
  // response only once the settle is recorded (settle-gate.ts).
  w.end();
  await served();
}

/** A sink that keeps a copy of the 200 answer it passes on, up to a size; past it, only that it was too big. */
export class CaptureSink implements CallSink {
  private readonly inner: CallSink;
  private readonly max: number;
  private parts: string[] = [];
  private bytes = 0;
  kind: 'json' | 'stream' | null = null;
  oversize = false;
  ended = false;

  constructor(inner: CallSink, maxBytes: number) {
    this.inner = inner;
    this.max = maxBytes;
  }

  headers(h: Record<string, string>): void {
    this.inner.headers(h);
  }

  json(status: number, headers: Record<string, string>, body: string): void {
    this.inner.json(status, headers, body);
    if (status !== 200) return;
    this.kind = 'json';
    this.add(body);
    this.ended = true;
  }

  stream(headers: Record<string, string>): StreamWriter {
    const w = this.inner.stream(headers);
    this.kind = 'stream';
    return {
      write: (text) => {
        this.add(text);
        return w.write(text);
      },
      end: (text) => {
        if (text !== undefined) this.add(text);
        this.ended = true;
        w.end(text);
      },
      get destroyed() {
        return w.destroyed;
      },
    };
  }

  /** The whole answer as the client got it, or null (oversize, none, not ended). */
  answer(): { kind: 'json' | 'stream'; body: string } | null {
    if (this.oversize || !this.ended || this.kind === null) return null;
    return { kind: this.kind, body: this.parts.join('') };
  }

  private add(text: string): void {
    if (this.oversize) return;
    this.bytes += Buffer.byteLength(text);
    if (this.bytes > this.max) {
      this.oversize = true;
      this.parts = [];
      return;
    }
    this.parts.push(text);
  }
}

/**
 * Stores a miss's answer once it is settled: only a complete 200 answer whose usage the upstream reported (not
 * estimated, not cut to the bound), so a hit repeats exactly what was charged. Failures are counted, never thrown.
 */
export async function writeCache(deps: GatewayDeps, plan: Lookup, capture: CaptureSink, e: UsageEvent): Promise<void> {
  const cache = deps.store.responseCache;
  const model = e.servedModel;
  if (!cache || !plan.write || e.status !== 200 || e.usageEstimated || e.usageClamped || model === null) return;
  if (capture.oversize) {
    deps.metrics.cache?.(plan.model, 'oversize');
    return;
  }
  const answer = capture.answer();
  if (!answer) return;
  const entry: CacheEntry = {
    v: 1,
    kind: answer.kind,
    body: answer.body,
    servedModel: model,
    usage: { inputTokens: e.inputTokens, outputTokens: e.outputTokens, cacheReadTokens: e.cacheReadTokens, cacheWriteTokens: e.cacheWriteTokens },
    costNano: e.costNano,
    ...(e.droppedTools && e.droppedTools.length > 0 ? { droppedTools: e.droppedTools } : {}),
  };
  const text = encodeEntry(entry);
  try {
    const r = await cache.put({
      account: e.account,
      sha: plan.sha,
      entry: text,
      ttlMs: plan.ttlMs,
      now: deps.now(),
      budgetBytes: deps.cacheAccountBytes ?? DEFAULT_CACHE_ACCOUNT_BYTES,
    });
    if (!r.stored) {
      deps.metrics.cache?.(plan.model, 'oversize');
      return;
    }
    deps.metrics.cache?.(plan.model, 'stored', Buffer.byteLength(text));
    if (r.evicted > 0) deps.metrics.cache?.(plan.model, 'evicted', r.evicted);
  } catch (err) {
    deps.metrics.cache?.(plan.model, 'error');
    deps.log.warn({ err }, 'Response cache write failed; the answer was served and is not cached');
  }
}
