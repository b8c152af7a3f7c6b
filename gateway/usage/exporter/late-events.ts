// A batch read from a Redis that then lost its data, committed to the ledger after the rebuild may have read it: its
// events would be in Postgres but not in the rebuilt balances (Redis below the ledger). The exporter reads the money
// generation marker before each read; when the marker has changed by the time the batch is committed, it waits for
// the rebuilt state (a marker again) and settles the batch's events there, each unless already settled: the rebuild
// remembers the ids it counted, and a gateway's retried settle marks its own, so every event counts exactly once.
import { redisKeys } from '../../contract/redis-keys.ts';
import { settleLateEvents, type RecentEvent } from '../../state/money-catch-up.ts';
import type { RedisClient as Redis } from '../../state/redis-connect.ts';
import { monthOf } from '../../state/store.ts';
import type { Row } from '../postgres/writer.ts';
import type { Log } from './log.ts';

/** How often the rebuilt state is looked for; how many settles an account whose money is not back yet gets once it is. */
const LOOK_MS = 200;
const ACCOUNT_TRIES = 50;

export class LateEvents {
  private readonly redis: Redis;
  private readonly marker: string;
  private readonly prefix: string;
  private readonly log: Log;

  constructor(redis: Redis, prefix: string, log: Log) {
    this.redis = redis;
    this.prefix = prefix;
    this.marker = redisKeys(prefix).moneyGeneration;
    this.log = log;
  }

  /** The money generation now (read before a batch is read). */
  generation(): Promise<string | null> {
    return this.redis.get(this.marker);
  }

  /**
   * After the batch read under `before` is committed (`rows`: those new to the ledger): nothing when the marker is unchanged (or there was none: a fresh
   * Redis, whose streams the gateways fill only once it is published); else the rows settled in the rebuilt state.
   */
  async settle(before: string | null, rows: readonly Row[], stopping: () => boolean, sleep: (ms: number) => Promise<void>): Promise<void> {
    if (before === null || rows.length === 0 || (await this.generation()) === before) return;
    let events = rows.map((r) => lateEvent(r));
    let tries = 0;
    for (;;) {
      const now = await this.generation().catch(() => null);
      if (now !== null && now !== before) {
        const r = await settleLateEvents(this.redis, this.prefix, events).catch(() => null);
        if (r && r.events > 0) {
          this.log.warn({ events: r.events, usd: r.nano / 1e9 }, 'Settled usage events the ledger recorded after the Redis rebuild had read it');
        }
        if (r?.pending.length === 0) return;
        if (r) events = events.filter((e) => r.pending.includes(e.account));
        if (++tries >= ACCOUNT_TRIES) return this.gaveUp(events);
      }
      if (stopping()) return this.gaveUp(events);
      await sleep(LOOK_MS);
    }
  }

  private gaveUp(events: readonly RecentEvent[]): void {
    this.log.error(
      { accounts: [...new Set(events.map((e) => e.account))], events: events.length },
      'Usage events committed after a Redis rebuild could not be settled in Redis: the reconciliation reports the drift',
    );
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
