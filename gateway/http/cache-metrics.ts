// Prometheus metrics of the response cache (pipeline/cache.ts), by route model: hits, misses and bypasses (from the
// usage events), bytes stored, entries not stored for size, evictions, failures, and the cost hits saved.
import { Counter, type Registry } from 'prom-client';
import { NANO_PER_USD } from '../contract/money.ts';
import type { CacheCount } from '../pipeline/context.ts';
import type { UsageEvent } from '../usage/event.ts';
import { FastCounter } from './fast-metrics.ts';

export class CacheMetrics {
  private readonly lookups: Counter;
  private readonly storedBytes: Counter;
  private readonly stored: Counter;
  private readonly oversize: Counter;
  private readonly evicted: Counter;
  private readonly errors: Counter;
  private readonly saved: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.lookups = new FastCounter({
      name: 'svc_gateway_cache_requests_total',
      help: 'Calls to routes with a response cache by result: hit (answered from the cache), miss (called upstream), bypass (not cacheable: no-store, sampling).',
      labelNames: ['model', 'result'],
      registers,
    });
    this.stored = new Counter({ name: 'svc_gateway_cache_stored_total', help: 'Answers written to the response cache.', labelNames: ['model'], registers });
    this.storedBytes = new Counter({
      name: 'svc_gateway_cache_stored_bytes_total',
      help: 'Bytes of entries written to the response cache.',
      labelNames: ['model'],
      registers,
    });
    this.oversize = new Counter({
      name: 'svc_gateway_cache_oversize_total',
      help: "Answers not stored: larger than the route's maxEntryBytes or the account's cache budget.",
      labelNames: ['model'],
      registers,
    });
    this.evicted = new Counter({
      name: 'svc_gateway_cache_evictions_total',
      help: "Entries removed to keep an account's cache within its byte budget (Redis' own maxmemory evictions are in its evicted_keys).",
      labelNames: ['model'],
      registers,
    });
    this.errors = new Counter({
      name: 'svc_gateway_cache_errors_total',
      help: 'Response cache reads or writes that failed (the call went on uncached), or entries that could not be read.',
      labelNames: ['model'],
      registers,
    });
    this.saved = new FastCounter({
      name: 'svc_gateway_cache_saved_usd_total',
      help: "What cache hits saved in USD: the original calls' cost minus what the hits were charged.",
      labelNames: ['model'],
      registers,
    });
  }

  count(model: string, what: CacheCount, n = 1): void {
    switch (what) {
      case 'stored':
        this.stored.inc({ model });
        this.storedBytes.inc({ model }, n);
        return;
      case 'oversize':
        this.oversize.inc({ model }, n);
        return;
      case 'evicted':
        this.evicted.inc({ model }, n);
        return;
      case 'error':
        this.errors.inc({ model }, n);
        return;
      default: {
        const never: never = what;
        return never;
      }
    }
  }

  observe(e: UsageEvent): void {
    if (!e.cache) return;
    this.lookups.inc({ model: e.requestedModel, result: e.cache });
    if (e.cacheSavedNano) this.saved.inc({ model: e.requestedModel }, e.cacheSavedNano / NANO_PER_USD);
  }
}
