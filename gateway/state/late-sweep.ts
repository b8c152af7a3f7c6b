// Settles in Redis the usage events the exporter committed to the ledger after Redis lost its data, whose rebuild may
// have read the ledger before them (the exporter queues them in Postgres: gateway/usage/exporter/late-events.ts). Each
// is settled unless the rebuilt Redis has it already (the rebuild remembers the ids it counted, a gateway's retried
// settle marks its own: catch-up.lua in its late mode), so the rebuilt money holds every ledger event exactly once.
// Run by the process that rebuilds (the operator's leader, or a standalone gateway with DATABASE_URL), whose Redis user
// may write money: the exporter's may not. An account whose money is not back yet keeps its events queued; after
// GIVE_UP_MS they are dropped with an error (the reconciliation then reports the drift).
import type { GuardLog } from './money-guard.ts';
import { settleLateEvents, type RecentEvent } from './money-catch-up.ts';
import type { RedisClient } from './redis-connect.ts';

export interface LateEvent extends RecentEvent {
  /** When the exporter queued it (ms). */
  queuedAtMs: number;
}

export interface LateQueue {
  /** The oldest queued events, at most `limit`. */
  take(limit: number): Promise<LateEvent[]>;
  /** Takes these events off the queue. */
  done(ids: readonly string[]): Promise<void>;
}

/** How often the queue is looked at (an empty queue: one indexed read). */
export const SWEEP_MS = 2000;
/** Events read per step. */
const TAKE = 1000;
/** An account whose money is still not back after this long: its queued events are given up. */
export const GIVE_UP_MS = 3_600_000;

export interface LateSweepOptions {
  redis: RedisClient;
  prefix: string;
  queue: LateQueue;
  log: GuardLog;
  everyMs?: number;
}

export class LateSweep {
  private readonly o: LateSweepOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(o: LateSweepOptions) {
    this.o = o;
  }

  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.sweep()
        .catch((err: unknown) => this.o.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'Late usage settles not swept; retrying'))
        .finally(() => (this.running = null));
    }, this.o.everyMs ?? SWEEP_MS).unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One step: the queued events settled where their money is back; returns what it did. */
  async sweep(now = Date.now()): Promise<{ events: number; nano: number; waiting: number; gaveUp: number }> {
    const out = { events: 0, nano: 0, waiting: 0, gaveUp: 0 };
    for (;;) {
      const queued = await this.o.queue.take(TAKE);
      if (queued.length === 0) break;
      // Remembered as settled from now (the settled set forgets an id SETTLED_MEMORY_MS after its score).
      const r = await settleLateEvents(
        this.o.redis,
        this.o.prefix,
        queued.map((e) => ({ ...e, atMs: now })),
      );
      out.events += r.events;
      out.nano += r.nano;
      const pending = new Set(r.pending);
      const done: string[] = [];
      for (const e of queued) {
        if (!pending.has(e.account)) done.push(e.eventId);
        else if (now - e.queuedAtMs >= GIVE_UP_MS) {
          out.gaveUp++;
          done.push(e.eventId);
        } else out.waiting++;
      }
      await this.o.queue.done(done);
      if (out.waiting > 0 || queued.length < TAKE) break;
    }
    if (out.events > 0) {
      this.o.log.warn({ events: out.events, usd: out.nano / 1e9 }, 'Settled usage events the ledger recorded after the Redis rebuild had read it');
    }
    if (out.gaveUp > 0) {
      this.o.log.error(
        { events: out.gaveUp },
        'Usage events committed after a Redis rebuild could not be settled in Redis (their accounts never came back): the reconciliation reports the drift',
      );
    }
    return out;
  }
}
