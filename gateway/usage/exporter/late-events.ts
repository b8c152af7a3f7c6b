// A batch read from a Redis that then lost its data, committed to the ledger after the rebuild may have read it: its
// events would be in Postgres but not in the rebuilt balances (Redis below the ledger). The exporter reads the money
// generation marker before each read; when the marker has changed by the time the batch is committed, it queues the
// batch's events in Postgres (usage_late_settles), and the process that rebuilds settles each in the rebuilt state
// unless already settled there (gateway/state/late-sweep.ts): the rebuild remembers the ids it counted, and a
// gateway's retried settle marks its own, so every event counts exactly once. The exporter never writes money in
// Redis itself: its Redis user may not.
import { redisKeys } from '../../contract/redis-keys.ts';
import type { RecentEvent } from '../../state/money-catch-up.ts';
import type { RedisClient as Redis } from '../../state/redis-connect.ts';
import { monthOf } from '../../state/store.ts';
import { queueLateSettles } from '../postgres/late-settles.ts';
import type { Row } from '../postgres/writer.ts';
import type pg from 'pg';
import type { Log } from './log.ts';

/** A queue write that fails (Postgres gone just after the commit) is tried again this often, this many times. */
const RETRY_MS = 1000;
const QUEUE_TRIES = 60;

export class LateEvents {
  private readonly redis: Redis;
  private readonly pool: pg.Pool;
  private readonly marker: string;
  private readonly log: Log;

  constructor(redis: Redis, pool: pg.Pool, prefix: string, log: Log) {
    this.redis = redis;
    this.pool = pool;
    this.marker = redisKeys(prefix).moneyGeneration;
    this.log = log;
  }

  /** The money generation now (read before a batch is read). */
  generation(): Promise<string | null> {
    return this.redis.get(this.marker);
  }

  /**
   * After the batch read under `before` is committed (`rows`: those new to the ledger): nothing when the marker is
   * unchanged (or there was none: a fresh Redis, whose streams the gateways fill only once it is published); else the
   * rows queued for the rebuilt state. A marker that cannot be read counts as changed (queuing is always safe).
   */
  async settle(before: string | null, rows: readonly Row[], stopping: () => boolean, sleep: (ms: number) => Promise<void>): Promise<void> {
    if (before === null || rows.length === 0) return;
    if ((await this.generation().catch(() => null)) === before) return;
    const events = rows.map(lateEvent);
    for (let tries = 1; ; tries++) {
      try {
        await queueLateSettles(this.pool, events);
        this.log.warn({ events: events.length }, 'Usage events committed after Redis lost its data: queued to be settled in the rebuilt Redis');
        return;
      } catch (err) {
        if (stopping() || tries >= QUEUE_TRIES) {
          this.log.error(
            { err, accounts: [...new Set(events.map((e) => e.account))], events: events.length },
            'Usage events committed after a Redis rebuild could not be queued to be settled in Redis: the reconciliation reports the drift',
          );
          return;
        }
        await sleep(RETRY_MS);
      }
    }
  }
}

function lateEvent(r: Row): RecentEvent {
  const e = r.event;
  return {
    account: e.account,
    eventId: e.eventId,
    month: monthOf(Date.parse(e.createdAt)),
    keyName: e.apiKey,
    costNano: String(e.costNano),
    feeNano: String(e.feeNano),
    cacheHit: e.cache === 'hit',
    savedNano: String(e.cacheSavedNano ?? 0),
    atMs: Date.now(),
  };
}
