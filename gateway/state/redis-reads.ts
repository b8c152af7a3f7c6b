// The Redis store's reads: an account's balance and month spend (/v1/me), its ledger totals, its month spend for
// status (the operator's refresh), and its usage stream read back (tests and tools). No writes.
import type { UsageEvent } from '../usage/event.ts';
import { entryEvents } from '../usage/event-schema.ts';
import { int } from './lua-script.ts';
import type { ScriptContext } from './redis-script-context.ts';
import { SCRIPTS } from './scripts.ts';
import { monthOf, type AccountView, type Ledger, type MonthSpend } from './store.ts';

export class RedisReads {
  private readonly c: ScriptContext;

  constructor(c: ScriptContext) {
    this.c = c;
  }

  async view(account: string, keyName: string, now: number): Promise<AccountView> {
    const a = this.c.k.account(account);
    const r = await this.c.guard('view', () => SCRIPTS.view.run(this.c.redis, { acct: a.acct, spend: a.spend }, { month: monthOf(now), keyName }));
    const [credited, spent, keySpend, acctSpend, keyHits, keySaved] = Array.isArray(r) ? r.map(int) : [];
    return {
      balanceNano: (credited ?? 0) - (spent ?? 0),
      keyMonthSpendNano: keySpend ?? 0,
      accountMonthSpendNano: acctSpend ?? 0,
      keyMonthCacheHits: keyHits ?? 0,
      keyMonthCacheSavedNano: keySaved ?? 0,
    };
  }

  async ledger(account: string): Promise<Ledger> {
    const a = this.c.k.account(account);
    const r = await SCRIPTS.ledger.run(this.c.redis, { acct: a.acct, holds: a.holds }, {});
    const [creditedNano = 0, spentNano = 0, feeNano = 0, heldNano = 0, openHolds = 0] = Array.isArray(r) ? r.map(int) : [];
    return { creditedNano, spentNano, feeNano, heldNano, openHolds };
  }

  /**
   * One account's money for status (the operator's spend refresh): credited and spent as the ledger holds them, and
   * this month's spend of the account and of each named key. Two reads in one pipeline (one round trip; both keys in
   * the account's hash slot, so Redis Cluster takes it too).
   */
  async monthSpend(account: string, keyNames: readonly string[], month: string): Promise<MonthSpend> {
    const a = this.c.k.account(account);
    const replies = await this.c.redis
      .pipeline()
      .hmget(a.acct, 'credited', 'spent')
      .hmget(a.spend, month, ...keyNames.map((k) => `${month}|${k}`))
      .exec();
    const values = (replies ?? []).map(([err, v]) => {
      if (err) throw err;
      return (v as Array<string | null>).map((x) => int(x ?? '0'));
    });
    const [credited = 0, spent = 0] = values[0] ?? [];
    const [accountMonth = 0, ...keys] = values[1] ?? [];
    return {
      creditedNano: credited,
      spentNano: spent,
      accountMonthNano: accountMonth,
      keyMonthNano: Object.fromEntries(keyNames.map((k, i) => [k, keys[i] ?? 0])),
    };
  }

  /** Usage events of one account's stream, oldest first (tests and tools; the exporter uses a consumer group). */
  async usageEvents(account: string): Promise<UsageEvent[]> {
    const entries = await this.c.redis.xrange(this.c.k.account(account).usage, '-', '+');
    return entries.flatMap(([, fields]) => entryEvents(fields) as UsageEvent[]);
  }
}
