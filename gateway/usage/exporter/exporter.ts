// The usage exporter: Redis Streams -> Postgres, at least once into an idempotent table, so exactly once in rows.
// Each replica reads new entries through the shared consumer group, commits them in one transaction, and only then
// acknowledges them; entries left pending by a replica that died are claimed (XAUTOCLAIM) after claimIdleMs; the
// streams are trimmed only below the oldest entry not yet acknowledged. Safe to run any number of replicas.
import type { RedisClient as Redis } from '../../state/redis-connect.ts';
import type pg from 'pg';
import { UsageWriter } from '../postgres/writer.ts';
import { chunk, toBatch, type Batch } from './batch.ts';
import { syncCredits } from './credit-sync.ts';
import type { Log } from './log.ts';
import { throttled } from './log.ts';
import type { ExporterMetrics, Stage } from './metrics.ts';
import { LateEvents } from './late-events.ts';
import { maintain } from './maintain.ts';
import type { Entry } from './redis-replies.ts';
import { UsageStreams } from './streams.ts';

export interface ExporterOptions {
  redis: Redis;
  pool: pg.Pool;
  /** Redis key prefix of the gateways (SVC_REDIS_PREFIX, default "svc"). */
  prefix: string;
  /** This replica's consumer name: unique per process. */
  consumer: string;
  metrics: ExporterMetrics;
  log: Log;
  batchSize?: number;
  /** Wait between reads when the streams are empty. */
  pollMs?: number;
  /** A pending entry idle this long belongs to a dead or stuck exporter and is claimed. */
  claimIdleMs?: number;
  claimEveryMs?: number;
  /** Trim, lag gauges, consumer cleanup. */
  maintainEveryMs?: number;
  discoverEveryMs?: number;
  creditsEveryMs?: number;
  /** An entry delivered more often than this is parked as a dead letter. */
  maxDeliveries?: number;
}

class Stopping extends Error {}

export class UsageExporter {
  readonly streams: UsageStreams;
  private readonly writer: UsageWriter;
  private readonly late: LateEvents;
  private readonly o: Required<Omit<ExporterOptions, 'redis' | 'pool' | 'log' | 'metrics'>> & Pick<ExporterOptions, 'redis' | 'pool' | 'log' | 'metrics'>;
  private readonly warn: Log['warn'];
  private readonly cursors = new Map<string, string>();
  private readonly due = { discover: 0, claim: 0, maintain: 0, credits: 0, partitions: 0 };
  private stopping = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;

  constructor(opts: ExporterOptions) {
    this.o = {
      batchSize: 500,
      pollMs: 200,
      claimIdleMs: 30_000,
      claimEveryMs: 5_000,
      maintainEveryMs: 10_000,
      discoverEveryMs: 10_000,
      // An option given as undefined (a command-line flag not set) keeps its default.
      creditsEveryMs: 60_000,
      maxDeliveries: 10,
      ...(Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as ExporterOptions),
    };
    this.streams = new UsageStreams(opts.redis, opts.prefix, opts.consumer);
    this.writer = new UsageWriter(opts.pool);
    this.late = new LateEvents(opts.redis, opts.pool, opts.prefix, opts.log);
    this.warn = throttled(opts.log);
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Finishes the batch in hand (or gives it up, left pending, if Postgres is down) and stops. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let handled = 0;
      try {
        handled = await this.tick();
      } catch (err) {
        if (err instanceof Stopping) break;
        await this.sleep(1_000);
      }
      if (handled === 0) await this.sleep(this.o.pollMs);
    }
  }

  /** One step: upkeep when due, then one read (claimed entries first) exported. Returns entries handled. */
  async tick(now = Date.now()): Promise<number> {
    await this.upkeep(now);
    // The money generation before the read: a batch committed after Redis lost its data and was rebuilt is queued to be
    // settled in the rebuilt state too (late-events.ts).
    const generation = await this.step('read', () => this.late.generation());
    let entries: Entry[] = [];
    let source: 'new' | 'claimed' = 'new';
    if (now >= this.due.claim) {
      entries = await this.step('claim', () => this.claimStale());
      if (entries.length < this.o.batchSize) this.due.claim = now + this.o.claimEveryMs;
      source = 'claimed';
    }
    if (entries.length === 0) {
      entries = await this.step('read', () => this.streams.readNew(this.o.batchSize));
      source = 'new';
    }
    if (entries.length === 0) return 0;
    this.o.metrics.entriesRead.inc({ source }, entries.length);
    const over = source === 'claimed' ? await this.overDelivered(entries) : { ids: new Set<string>(), counts: new Map<string, number>() };
    const rows = [];
    for (const part of chunk(entries, this.o.batchSize)) {
      const b = toBatch(part, over.ids, over.counts);
      const fresh = new Set(await this.export(b));
      rows.push(...b.rows.filter((r) => fresh.has(r.event.eventId)));
    }
    await this.late.settle(
      generation,
      rows,
      () => this.stopping,
      (ms) => this.sleep(ms),
    );
    return entries.length;
  }

  private async upkeep(now: number): Promise<void> {
    // Until a stream is known, look every tick: events of a just-published account must not wait discoverEveryMs
    // in Redis, where a Redis that loses its data would take them along.
    if (now >= this.due.discover || this.streams.streams.length === 0) {
      const n = await this.step('discover', () => this.streams.discover());
      this.o.metrics.streams.set(n);
      this.due.discover = now + this.o.discoverEveryMs;
    }
    if (now >= this.due.partitions) {
      await this.step('write', () => this.writer.partitions.ahead(now));
      this.due.partitions = now + 3_600_000;
    }
    if (now >= this.due.credits) {
      this.due.credits = now + this.o.creditsEveryMs;
      await this.step('credits', () => syncCredits(this.o.redis, this.o.pool, this.o.prefix)).catch(() => {});
    }
    if (now >= this.due.maintain) {
      this.due.maintain = now + this.o.maintainEveryMs;
      await this.step('trim', () => maintain(this.streams, this.o.metrics, now)).catch(() => {});
    }
  }

  /** Stale pending entries of other consumers, up to one batch, resuming each stream's scan where it stopped. */
  private async claimStale(): Promise<Entry[]> {
    const out: Entry[] = [];
    for (const s of this.streams.streams) {
      if (out.length >= this.o.batchSize) break;
      const r = await this.streams.claim(s, this.o.claimIdleMs, this.cursors.get(s) ?? '0-0', this.o.batchSize - out.length);
      this.cursors.set(s, r.next);
      if (r.deleted.length > 0) {
        this.o.metrics.lost.inc(r.deleted.length);
        this.o.log.error({ stream: s, entries: r.deleted.length }, 'Lost pending usage entries: the stream was trimmed before they were exported');
      }
      out.push(...r.entries);
    }
    return out;
  }

  private async overDelivered(entries: Entry[]): Promise<{ ids: Set<string>; counts: Map<string, number> }> {
    const ids = new Set<string>();
    const counts = new Map<string, number>();
    const byStream = Map.groupBy(entries, (e) => e.stream);
    for (const [s, list] of byStream) {
      const d = await this.step('claim', () =>
        this.streams.deliveries(
          s,
          list.map((e) => e.id),
        ),
      );
      for (const [id, n] of d) {
        counts.set(id, n);
        if (n > this.o.maxDeliveries) ids.add(id);
      }
    }
    return { ids, counts };
  }

  /** Commits the batch (retrying while Postgres is away), then acknowledges it. Never acknowledges before. Returns the ids new to the ledger. */
  private async export(b: Batch): Promise<string[]> {
    const t0 = performance.now();
    const r = await this.retrying('write', () => this.writer.write(b.rows, b.dead));
    const m = this.o.metrics;
    m.rowsWritten.inc(r.inserted);
    m.duplicates.inc(r.duplicates);
    m.parked(r.parked);
    if (r.parked.length > 0) this.o.log.warn({ parked: r.parked.length, reasons: [...new Set(r.parked)] }, 'Parked usage entries in usage_dead_letters');
    m.batchSize.observe(b.entries.length);
    m.lastCommit.set(Date.now() / 1000);
    // Committed: an entry not acknowledged now is redelivered later and skipped as a duplicate.
    const acked = await this.retrying('ack', () => this.streams.ack(b.entries));
    m.acked.inc(acked);
    m.batchSeconds.observe((performance.now() - t0) / 1000);
    return r.insertedIds;
  }

  private async retrying<T>(stage: Stage, op: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await op();
      } catch (err) {
        this.o.metrics.errors.inc({ stage });
        this.warn({ err, stage, attempt }, `Usage export ${stage} failed; retrying`);
        if (this.stopping) throw new Stopping();
        await this.sleep(Math.min(5_000, 100 * 2 ** Math.min(attempt, 6)));
        if (this.stopping) throw new Stopping();
      }
    }
  }

  private async step<T>(stage: Stage, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      this.o.metrics.errors.inc({ stage });
      this.warn({ err, stage }, `Usage export ${stage} failed`);
      throw err;
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
  }
}
