// A rebuild restores what the Stripe ledger applied, not only balances: a payment, a refund and an SLA credit applied
// before Redis lost its data are recognised after the rebuild, so the webhook resent by Stripe (or the SLA job run
// again) applies nothing twice, and the billing page's entries are back (docs/operations.md: Redis lost its data).
// And a settle Redis applied just before it lost its data, whose answer the gateway never got (it retries it after the
// rebuild), charges nothing a second time on top of the spend restored from the ledger.
import { randomUUID } from 'node:crypto';
import type { MoneyRecord } from '../../gateway/state/money-record.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import { RedisBilling, type BillingStep } from '../../gateway/state/billing-ledger.ts';
import { LateSweep } from '../../gateway/state/late-sweep.ts';
import { restoreAccounts, SettledStage } from '../../gateway/state/money-restore.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { monthOf } from '../../gateway/state/store.ts';
import { recordBillingEntries } from '../../gateway/usage/postgres/billing-credits.ts';
import { recordCredits } from '../../gateway/usage/postgres/credits.ts';
import { migrate } from '../../gateway/usage/postgres/migrate.ts';
import { lateQueue } from '../../gateway/usage/postgres/late-settles.ts';
import { readMoneyRecords } from '../../gateway/usage/postgres/money-record.ts';
import { UsageWriter } from '../../gateway/usage/postgres/writer.ts';
import { UsageExporter } from '../../gateway/usage/exporter/exporter.ts';
import { ExporterMetrics } from '../../gateway/usage/exporter/metrics.ts';
import { redisKeys } from '../../gateway/contract/redis-keys.ts';
import { Registry } from 'prom-client';
import type { Pool } from 'pg';
import { account, held, keyRec, request, snapshot as oneAccount, usage } from '../../gateway/state/store-suite-fixtures.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

let redis: TestRedis;
let pg: TestPostgres;
let store: RedisStore;
const at = Date.parse('2026-11-02T10:00:00Z');

/** The ledger's records (of one account, given its name) and a stage holding their recent ids, as a rebuild reads them. */
async function fromLedger(month: string, only?: string): Promise<{ records: MoneyRecord[]; stage: SettledStage; ids: string[] }> {
  const stage = new SettledStage(store.redis, store.prefix);
  const ids: string[] = [];
  const records = await readMoneyRecords(pg.pool, month, async (account, slice) => {
    if (only !== undefined && account !== only) return;
    ids.push(...slice.map(([id]) => id));
    await stage.add(account, slice);
  });
  return { records: records.filter((r) => only === undefined || r.account === only), stage, ids };
}
const snapshot = {
  schema: 1 as const,
  version: 'v1',
  plans: { builder: { name: 'builder', tier: 2, anthropicEndpoint: true, models: null, rpm: null, tpm: null } },
  accounts: { acme: { name: 'acme', plan: 'builder', trialCreditNano: NANO_PER_USD, credits: [] } },
  models: {},
};

const pay: BillingStep = {
  account: 'acme',
  op: 'credit',
  eventId: 'evt_pay',
  objectId: 'checkout:cs_1',
  paymentIntent: 'pi_1',
  amountNano: 20 * NANO_PER_USD,
  entry: { kind: 'payment', reference: 'cs_1', at, eventId: 'evt_pay' },
};
const refund: BillingStep = {
  account: 'acme',
  op: 'refund',
  eventId: 'evt_ref',
  objectId: 'refund:re_1',
  paymentIntent: 'pi_1',
  amountNano: 5 * NANO_PER_USD,
  status: 'succeeded',
  entry: { kind: 'refund', reference: 're_1', at: at + 1, eventId: 'evt_ref' },
};
const sla: BillingStep = {
  account: 'acme',
  op: 'credit',
  eventId: 'sla-2026-10',
  objectId: 'sla-2026-10',
  paymentIntent: '',
  amountNano: NANO_PER_USD / 2,
  entry: { kind: 'sla', reference: 'sla-2026-10', at: at + 2, eventId: 'sla-2026-10' },
};

beforeAll(async () => {
  redis = await startRedis('loss-ledger', { own: true });
  pg = await startPostgres('loss_ledger');
  await migrate(pg.pool);
  store = await RedisStore.connect({ url: redis.url, prefix: redis.prefix });
}, 60_000);

afterAll(async () => {
  await store?.close();
  await redis?.stop();
  await pg?.stop();
});

describe('a rebuild restores the Stripe ledger', () => {
  it('applies no payment, refund or SLA credit twice after Redis lost its data', async () => {
    const billing = new RedisBilling(store.redis, store.prefix);
    await store.applyConfig(snapshot, []);
    await recordCredits(pg.pool, snapshot);
    for (const step of [pay, refund, sla]) expect((await billing.apply(step)).verdict).toBe('applied');
    await recordBillingEntries(pg.pool, 'acme', await billing.entries('acme'));
    const before = await store.ledger('acme');
    expect(before.creditedNano).toBe(16.5 * NANO_PER_USD);
    const entries = await billing.entries('acme');

    await redis.client.flushall(); // the data is gone
    expect(await store.redis.hget(`${redis.prefix}:{a:acme}:acct`, 'credited')).toBeNull();
    // Stripe resends the payment before the rebuild: it must wait (the webhook retries), or be recognised after.
    const { records, stage } = await fromLedger(monthOf(at));
    expect(await restoreAccounts(store.redis, store.prefix, records, stage)).toBe(1);
    expect(await restoreAccounts(store.redis, store.prefix, records, stage)).toBe(0); // never twice
    expect((await store.ledger('acme')).creditedNano).toBe(before.creditedNano);
    expect(await billing.entries('acme')).toEqual(entries);

    expect((await billing.apply(pay)).verdict).toBe('duplicate-event');
    expect((await billing.apply({ ...pay, eventId: 'evt_pay_again' })).verdict).toBe('duplicate-object');
    expect((await billing.apply({ ...refund, eventId: 'evt_ref_again' })).verdict).toBe('nothing');
    expect((await billing.apply({ ...sla, eventId: 'sla-2026-10' })).verdict).toBe('duplicate-event');
    await store.applyConfig(snapshot, []); // the config published again: the trial is not granted again
    expect((await store.ledger('acme')).creditedNano).toBe(before.creditedNano);
  });
});

describe('a rebuild remembers the settles the ledger recorded', () => {
  it('charges a settle once when Redis applied it, lost its data before the gateway heard back, and the gateway retries it', async () => {
    const acct = account({ name: 'retry', trialCreditNano: NANO_PER_USD });
    const key = keyRec({ account: 'retry', name: 'rk', hash: 'cd'.repeat(32) });
    await store.applyConfig(oneAccount([acct]), [key]);
    await recordCredits(pg.pool, oneAccount([acct]));
    const now = Date.now();
    const first = held(await store.admit(request(key, acct, now, { eventId: randomUUID() })));
    const retried = held(await store.admit(request(key, acct, now, { eventId: randomUUID() })));
    const settleOf = (hold: typeof first, cost: number) => ({ costNano: cost, tokens: 10, event: usage(hold, cost, now) });
    await store.settle(first, settleOf(first, 7_000));
    await store.settle(retried, settleOf(retried, 11_000)); // applied; its answer is lost with the connection
    // The exporter copied both events to the ledger before the loss.
    const writer = new UsageWriter(pg.pool);
    const w = await writer.write([first, retried].map((h, i) => ({ source: 'test', entryId: `0-${i + 1}`, event: usage(h, i === 0 ? 7_000 : 11_000, now) })));
    expect(w.inserted).toBe(2);
    const before = await store.ledger('retry');
    expect(before.spentNano).toBe(18_000);

    await redis.client.flushall();
    const { records, stage, ids } = await fromLedger(monthOf(now), 'retry');
    expect(ids.sort()).toEqual([first.id, retried.id].sort());
    expect(await restoreAccounts(store.redis, store.prefix, records, stage)).toBe(1);
    expect((await store.ledger('retry')).spentNano).toBe(18_000);

    // The gateway retries the settle it never heard back from: a no-op, as it was before the loss.
    await store.settle(retried, settleOf(retried, 11_000));
    expect((await store.ledger('retry')).spentNano).toBe(18_000);
    expect((await store.view('retry', 'rk', now)).keyMonthSpendNano).toBe(18_000);
    // A call the ledger never saw is still charged when its settle lands after the rebuild.
    const late = held(await store.admit(request(key, acct, Date.now(), { eventId: randomUUID() })));
    await store.settle(late, settleOf(late, 5_000));
    expect((await store.ledger('retry')).spentNano).toBe(23_000);
  });
});

describe('a batch settled again after the rebuild', () => {
  it('charges each line the ledger recorded once (the set of charged lines was lost with the rest)', async () => {
    const acct = account({ name: 'lines', trialCreditNano: NANO_PER_USD });
    const key = keyRec({ account: 'lines', name: 'lk', hash: 'ef'.repeat(32) });
    await store.applyConfig(oneAccount([acct]), [key]);
    await recordCredits(pg.pool, oneAccount([acct]));
    const now = Date.now();
    const hold = held(await store.admit(request(key, acct, now, { eventId: randomUUID(), holdNano: 100_000 })));
    const parts = store.parts;
    if (!parts) throw new Error('the Redis store settles batches in parts');
    const line = (cost: number) => {
      const event = { ...usage(hold, cost, now), eventId: randomUUID() };
      return { lineId: event.eventId, lineHoldNano: 10_000, costNano: cost, event };
    };
    const first = line(3_000);
    await parts.settleLine(hold, first);
    expect((await new UsageWriter(pg.pool).write([{ source: 'test', entryId: '1-1', event: first.event }])).inserted).toBe(1);
    await redis.client.flushall();
    const { records, stage } = await fromLedger(monthOf(now), 'lines');
    expect(await restoreAccounts(store.redis, store.prefix, records, stage)).toBe(1);
    expect((await store.ledger('lines')).spentNano).toBe(3_000);
    // The batch job runs again (it was interrupted by the loss): the line already charged is not charged again.
    await parts.settleLine(hold, first);
    expect((await store.ledger('lines')).spentNano).toBe(3_000);
    await parts.settleLine(hold, line(4_000));
    expect((await store.ledger('lines')).spentNano).toBe(7_000);
  });
});

describe('a batch the exporter committed after the rebuild read the ledger is settled in the rebuilt Redis', () => {
  const silent = { info: () => {}, warn: () => {}, error: () => {} };
  /** The ledger's pool, with `loss` run once (armed) before the next thing the exporter asks of Postgres. */
  function poolWithLoss(): { pool: Pool; arm: (loss: () => Promise<void>) => void } {
    let armed: (() => Promise<void>) | null = null;
    const fire = async (): Promise<void> => {
      const loss = armed;
      armed = null;
      await loss?.();
    };
    const pool = new Proxy(pg.pool, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if ((prop === 'connect' || prop === 'query') && typeof v === 'function') {
          return async (...args: unknown[]) => {
            await fire();
            return (v as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return v;
      },
    });
    return { pool, arm: (loss) => void (armed = loss) };
  }

  const rebuild = async (name: string): Promise<void> => {
    const { records, stage } = await fromLedger(monthOf(Date.now()), name);
    expect(await restoreAccounts(store.redis, store.prefix, records, stage)).toBe(1);
    await store.redis.set(redisKeys(store.prefix).moneyGeneration, `gen-after-${name}`);
  };

  for (const order of ['the rebuild read the ledger first', 'the batch committed first'] as const) {
    it(`charges each exported call once when ${order}`, async () => {
      const name = order === 'the rebuild read the ledger first' ? 'late-a' : 'late-b';
      const acct = account({ name, trialCreditNano: NANO_PER_USD });
      const key = keyRec({ account: name, name: `${name}-k`, hash: (name === 'late-a' ? 'e1' : 'e2').repeat(32) });
      await store.applyConfig(oneAccount([acct]), [key]);
      await recordCredits(pg.pool, oneAccount([acct]));
      await store.redis.set(redisKeys(store.prefix).moneyGeneration, `gen-before-${name}`);
      const call = async (cost: number): Promise<void> => {
        const h = held(await store.admit(request(key, acct, Date.now(), { eventId: randomUUID() })));
        await store.settle(h, { costNano: cost, tokens: 10, event: usage(h, cost, Date.now()) });
      };
      const { pool, arm } = poolWithLoss();
      const exporter = new UsageExporter({
        redis: store.redis,
        pool,
        prefix: store.prefix,
        consumer: `test-${name}`,
        metrics: new ExporterMetrics(new Registry()),
        log: silent,
        pollMs: 20,
      });
      await call(7_000);
      while ((await exporter.tick()) > 0); // exported before the loss
      await call(11_000); // settled in Redis, in the stream, not yet in Postgres when Redis loses its data
      arm(async () => {
        await redis.client.flushall();
        if (order === 'the rebuild read the ledger first') await rebuild(name);
        else setTimeout(() => void rebuild(name), 300); // after the commit below: the rebuild counts the call itself
      });
      expect(await exporter.tick()).toBe(1);
      // The exporter wrote nothing to Redis's money: it queued the batch in Postgres, which the process that rebuilds
      // sweeps (the operator's leader), settling each event the rebuild did not count.
      const sweep = new LateSweep({ redis: store.redis, prefix: store.prefix, queue: lateQueue(pg.pool), log: silent });
      const queued = async (): Promise<number> =>
        Number((await pg.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM usage_late_settles WHERE account = $1', [name])).rows[0]?.n);
      expect(await queued()).toBe(1);
      await until(async () => (await store.redis.get(redisKeys(store.prefix).moneyGeneration)) === `gen-after-${name}`, 5000, 'the rebuild', 20);
      const swept = await sweep.sweep();
      expect(swept.events).toBe(order === 'the rebuild read the ledger first' ? 1 : 0);
      expect(await queued()).toBe(0);
      const ledger = (await readMoneyRecords(pg.pool, monthOf(Date.now()), async () => {})).find((r) => r.account === name);
      expect(ledger?.spentNano).toBe(18_000);
      expect((await store.ledger(name)).spentNano).toBe(18_000); // Redis agrees with the ledger: not 7,000, not 29,000
      expect((await store.view(name, key.name, Date.now())).keyMonthSpendNano).toBe(18_000);
      await exporter.stop();
    });
  }
});
