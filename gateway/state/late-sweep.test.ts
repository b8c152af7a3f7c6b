// The sweep of late usage events (late-sweep.ts) on a real Redis: an event is settled once however often it is swept,
// one the rebuilt Redis counted already costs nothing, an account whose money is not back keeps its events queued,
// and after an hour they are given up with an error. (The Postgres queue and the exporter: test/billing/redis-loss-ledger.test.ts.)
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import { GIVE_UP_MS, LateSweep, type LateEvent, type LateQueue } from './late-sweep.ts';
import { RedisStore } from './redis-store.ts';
import { account, held, keyRec, request, snapshot, usage } from './store-suite-fixtures.ts';

let redis: TestRedis;
let n = 0;

beforeAll(async () => {
  redis = await startRedis('late-sweep');
});
afterAll(async () => {
  await redis?.stop();
});

/** The queue in memory, as the Postgres one behaves. */
function memoryQueue(events: LateEvent[]): LateQueue & { left: LateEvent[] } {
  const q = {
    left: [...events],
    take: async (limit: number) => q.left.slice(0, limit),
    done: async (ids: readonly string[]) => void (q.left = q.left.filter((e) => !ids.includes(e.eventId))),
  };
  return q;
}

function late(over: Partial<LateEvent> = {}): LateEvent {
  return {
    account: 'acme',
    eventId: randomUUID(),
    month: new Date().toISOString().slice(0, 7),
    keyName: 'k1',
    costNano: '7000',
    feeNano: '0',
    cacheHit: false,
    savedNano: '0',
    atMs: Date.now(),
    queuedAtMs: Date.now(),
    ...over,
  };
}

async function withStore(f: (store: RedisStore) => Promise<void>): Promise<void> {
  const store = await RedisStore.connect({ url: redis.url, prefix: `${redis.prefix}-${++n}` });
  try {
    await f(store);
  } finally {
    await store.close();
  }
}

const errors: string[] = [];
const log = { info: () => {}, warn: () => {}, error: (_: object, m: string) => void errors.push(m) };

describe('the sweep of usage events committed after a rebuild read the ledger', () => {
  it('settles each once, however often it is swept; one the rebuilt Redis settled already costs nothing', async () => {
    await withStore(async (store) => {
      await store.applyConfig(snapshot([account()]), [keyRec()]);
      const now = Date.now();
      // A call settled in the rebuilt Redis (its gateway retried the settle): its event is queued too.
      const h = held(await store.admit(request(keyRec(), account(), now, { eventId: randomUUID() })));
      await store.settle(h, { costNano: 5_000, tokens: 10, event: usage(h, 5_000, now) });
      const spent = (await store.ledger('acme')).spentNano;
      const missing = late();
      const queue = memoryQueue([missing, late({ eventId: h.id, costNano: '5000' }), missing]);
      const sweep = new LateSweep({ redis: store.redis, prefix: store.prefix, queue, log });
      expect(await sweep.sweep()).toEqual({ events: 1, nano: 7_000, waiting: 0, gaveUp: 0 });
      expect(queue.left).toEqual([]);
      expect((await store.ledger('acme')).spentNano).toBe(spent + 7_000);
      // Queued again (an exporter that retried its queue write): nothing more.
      queue.left.push(missing);
      expect(await sweep.sweep()).toEqual({ events: 0, nano: 0, waiting: 0, gaveUp: 0 });
      expect((await store.ledger('acme')).spentNano).toBe(spent + 7_000);
      expect((await store.view('acme', 'k1', now)).keyMonthSpendNano).toBe(spent + 7_000);
    });
  });

  it('keeps the events of an account whose money is not back, settles them once it is, gives them up after an hour', async () => {
    await withStore(async (store) => {
      const now = Date.now();
      const queue = memoryQueue([late(), late({ account: 'gone', queuedAtMs: now - GIVE_UP_MS })]);
      const sweep = new LateSweep({ redis: store.redis, prefix: store.prefix, queue, log });
      errors.length = 0;
      // Neither account's money is in this Redis yet (a rebuild still running).
      expect(await sweep.sweep(now)).toEqual({ events: 0, nano: 0, waiting: 1, gaveUp: 1 });
      expect(queue.left.map((e) => e.account)).toEqual(['acme']);
      expect(errors).toEqual([expect.stringContaining('could not be settled')]);
      await store.applyConfig(snapshot([account()]), [keyRec()]);
      expect(await sweep.sweep(now)).toEqual({ events: 1, nano: 7_000, waiting: 0, gaveUp: 0 });
      expect(queue.left).toEqual([]);
    });
  });

  it('started, it sweeps on its own until stopped', async () => {
    await withStore(async (store) => {
      await store.applyConfig(snapshot([account()]), [keyRec()]);
      const queue = memoryQueue([late()]);
      const sweep = new LateSweep({ redis: store.redis, prefix: store.prefix, queue, log, everyMs: 20 });
      sweep.start();
      const t0 = Date.now();
      while (queue.left.length > 0 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
      await sweep.stop();
      expect(queue.left).toEqual([]);
      expect((await store.ledger('acme')).spentNano).toBe(7_000);
    });
  });
});
