// Usage events of a standalone gateway without Redis (in-memory store) into Postgres: a bounded in-memory queue,
// written in batches by the same writer the exporter uses (idempotent by event id, poison parked), retried with
// backoff while Postgres is away. An event leaves the queue only after its batch committed.
//
// The documented limit of memory mode: the queue lives in this process. If the process dies (SIGKILL, OOM, a
// crash) the events not yet committed are lost (at most the queue; normally well under a second of traffic); on
// SIGTERM the queue is flushed for up to `closeTimeoutMs` first. If Postgres stays away long enough for the queue
// to fill (maxQueue events), new events are dropped and counted. For no loss, use REDIS_URL: events then wait in
// a Redis Stream, written in the same atomic step that settles their cost.
import { Counter, Gauge, type Registry } from 'prom-client';
import type pg from 'pg';
import type { UsageEvent, UsageSink } from './event.ts';
import { throttled, type Log } from './exporter/log.ts';
import { UsageWriter, type WriteResult } from './postgres/writer.ts';

export interface PostgresSinkOptions {
  pool: pg.Pool;
  log: Log;
  registry: Registry;
  maxQueue?: number;
  batchSize?: number;
  /** Waits before the first write, e.g. for the schema migrations (retried). */
  before?: () => Promise<void>;
}

interface SinkMetrics {
  depth: Gauge;
  written: Counter;
  dropped: Counter;
  errors: Counter;
  dead: Counter;
}

function sinkMetrics(registry: Registry): SinkMetrics {
  const registers = [registry];
  return {
    depth: new Gauge({ name: 'svc_gateway_usage_queue_events', help: 'Usage events waiting in memory for Postgres (memory mode).', registers }),
    written: new Counter({ name: 'svc_gateway_usage_rows_written_total', help: 'Usage events newly written to Postgres (memory mode).', registers }),
    dropped: new Counter({
      name: 'svc_gateway_usage_dropped_total',
      help: 'Usage events dropped because the queue was full (memory mode; must stay 0).',
      registers,
    }),
    errors: new Counter({ name: 'svc_gateway_usage_write_errors_total', help: 'Failed Postgres writes of usage events (retried).', registers }),
    dead: new Counter({ name: 'svc_gateway_usage_dead_letters_total', help: 'Usage events Postgres rejected, parked in usage_dead_letters.', registers }),
  };
}

export class PostgresUsageSink implements UsageSink {
  private readonly queue: UsageEvent[] = [];
  private readonly writer: UsageWriter;
  private readonly o: Required<Omit<PostgresSinkOptions, 'before'>> & Pick<PostgresSinkOptions, 'before'>;
  private readonly m: SinkMetrics;
  private readonly warn: Log['warn'];
  private flushing: Promise<void> | null = null;
  private closing = false;

  constructor(opts: PostgresSinkOptions) {
    this.o = { maxQueue: 100_000, batchSize: 500, ...opts };
    this.writer = new UsageWriter(opts.pool);
    this.m = sinkMetrics(opts.registry);
    this.warn = throttled(opts.log);
  }

  emit(event: UsageEvent): void {
    if (this.queue.length >= this.o.maxQueue) {
      this.m.dropped.inc();
      this.warn({ queued: this.queue.length }, 'Usage queue full (Postgres unreachable for long): dropped a usage event');
      return;
    }
    this.queue.push(event);
    this.m.depth.set(this.queue.length);
    this.kick();
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Flushes for up to `timeoutMs`, then stops; returns how many events could not be written (lost). */
  async close(timeoutMs = 10_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length > 0 && Date.now() < deadline) {
      this.kick();
      await Promise.race([this.flushing, new Promise((r) => setTimeout(r, Math.min(100, Math.max(0, deadline - Date.now()))))]);
    }
    this.closing = true;
    await this.flushing;
    if (this.queue.length > 0) this.o.log.error({ lost: this.queue.length }, 'Stopped with usage events not written to Postgres');
    return this.queue.length;
  }

  private kick(): void {
    if (this.flushing || this.closing) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    if (this.o.before) {
      if ((await this.retry(this.o.before)) === null) return;
      this.o.before = undefined;
    }
    while (this.queue.length > 0 && !this.closing) {
      const batch = this.queue.slice(0, this.o.batchSize);
      const r = await this.retry(() => this.writer.write(batch.map((event) => ({ source: 'memory', entryId: event.eventId, event }))));
      if (!r) return;
      // Only now, committed, do the events leave the queue.
      this.queue.splice(0, batch.length);
      this.m.depth.set(this.queue.length);
      this.m.written.inc(r.inserted);
      this.m.dead.inc(r.parked.length);
    }
  }

  /** Retries until it succeeds or the sink is closing (null). */
  private async retry<T extends WriteResult | void>(op: () => Promise<T>): Promise<T | null> {
    for (let attempt = 0; !this.closing; attempt++) {
      try {
        return await op();
      } catch (err) {
        this.m.errors.inc();
        this.warn({ err, queued: this.queue.length }, 'Writing usage events to Postgres failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(2_000, 100 * 2 ** Math.min(attempt, 5))));
      }
    }
    return null;
  }
}
