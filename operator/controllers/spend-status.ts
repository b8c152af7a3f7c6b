// The leader's spend refresh (docs/kubernetes.md: Spend in status): every interval, the ledger of each account is read
// from Redis (one pipelined round trip per account, a few accounts at a time) and the Accounts' and ApiKeys' status
// get month spend, budget used and balance. A status is patched only when a figure changed (or its observed time is
// getting old), at most MAX_WRITES a tick; crossings are Events, remembered in status so a restart does not repeat
// them. Redis down: nothing is written, the tick is logged and counted, the next one tries again.
import { usdToNano } from '../../gateway/contract/money.ts';
import { monthOf, type MonthSpend } from '../../gateway/state/store.ts';
import type { CrKind, CustomObject } from '../kube/clients.ts';
import { patchStatus } from '../kube/patch.ts';
import type { OperatorMetrics } from '../metrics.ts';
import { compiled } from './compiled.ts';
import { objectKey, type ControllerContext } from './context.ts';
import { accountSpend, budgetMessage, budgetPercent, keySpend, lowBalanceMessage } from './spend.ts';
import { statusDiff } from './status.ts';

/** After a config publish (a new account, a top-up, a new key), the next refresh comes this soon. */
const SOON_MS = 1000;
/** Accounts read at once (each one round trip). */
const READ_CONCURRENCY = 8;
/** Status patches at most per tick; the rest follow on the next (they still differ then). */
export const MAX_WRITES = 500;
/** An unchanged status gets a new spendObservedTime after 10 intervals, 10 minutes at least: an old time means stale figures. */
const observedRefreshMs = (intervalMs: number): number => Math.max(10 * intervalMs, 600_000);

interface Write {
  kind: CrKind;
  obj: CustomObject;
  fields: Record<string, unknown>;
  event?: { type: 'Normal' | 'Warning'; reason: string; message: string };
}

export class SpendStatus {
  private readonly ctx: ControllerContext;
  private readonly metrics: OperatorMetrics;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private stopped = false;
  private started = false;
  /** A publish asked for an early refresh while one was running. */
  private soonAfter = false;
  /** When the scheduled refresh runs (ms). */
  private nextAt = 0;
  /** What this process last wrote, by object uid: the informer cache may not have seen it yet. */
  private readonly written = new Map<string, Record<string, unknown>>();

  constructor(ctx: ControllerContext, metrics: OperatorMetrics, intervalMs: number) {
    this.ctx = ctx;
    this.metrics = metrics;
    this.intervalMs = intervalMs;
  }

  /** First refresh now, then one every interval after the previous ended (never two at once). */
  start(): void {
    this.started = true;
    this.loop();
  }

  /**
   * An early refresh, SOON_MS from now (not later than the one scheduled): a new account shows its balance without
   * waiting a whole interval. Publishes are not per call, so this stays bounded (at most one refresh a second).
   */
  soon(): void {
    if (!this.started || this.stopped) return;
    if (this.running) {
      this.soonAfter = true;
      return;
    }
    if (this.nextAt <= Date.now() + SOON_MS) return;
    this.schedule(SOON_MS);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.nextAt = Date.now() + ms;
    this.timer = setTimeout(() => this.loop(), ms);
  }

  private loop(): void {
    if (this.stopped) return;
    this.running = this.tick().finally(() => {
      this.running = null;
      const wait = this.soonAfter ? SOON_MS : this.intervalMs;
      this.soonAfter = false;
      if (!this.stopped) this.schedule(wait);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One refresh; never throws (a failed read or write is logged and counted). */
  async tick(): Promise<void> {
    const end = this.metrics.spendRefreshDuration.startTimer();
    try {
      const failed = await this.refresh();
      this.metrics.spendRefreshes.inc({ result: failed ? 'error' : 'success' });
    } catch (err) {
      this.metrics.spendRefreshes.inc({ result: 'error' });
      this.ctx.log.warn('Spend refresh failed; status left as it was', { error: err });
    } finally {
      end();
    }
  }

  /** Returns whether some ledger could not be read. */
  private async refresh(): Promise<boolean> {
    const { ctx } = this;
    const now = ctx.now();
    const month = monthOf(now.getTime());
    const c = compiled(ctx);
    const keysOf = new Map<string, Array<{ name: string; budgetNano: number | null }>>();
    for (const a of Object.keys(c.snapshot.accounts)) keysOf.set(a, []);
    for (const k of c.keys) {
      const list = keysOf.get(k.account) ?? [];
      list.push({ name: k.name, budgetNano: k.monthlyBudgetNano });
      keysOf.set(k.account, list);
    }
    const { readings, errors } = await this.read(
      [...keysOf].map(([account, keys]) => ({ account, keys: keys.map((k) => k.name) })),
      month,
    );
    if (errors.length > 0) {
      ctx.log.warn('Spend refresh could not read the ledger; status left as it was', {
        accounts: errors.length,
        error: errors[0],
      });
    }
    const writes: Write[] = [];
    for (const [account, keys] of keysOf) {
      const r = readings.get(account);
      if (!r) continue;
      const acctObj = ctx.caches.Account.get(account);
      if (acctObj) {
        const w = this.accountWrite(acctObj, r, month);
        if (w) writes.push(w);
      }
      for (const k of keys) {
        const keyObj = ctx.caches.ApiKey.get(k.name);
        if (!keyObj) continue;
        const w = this.keyWrite(keyObj, r.keyMonthNano[k.name] ?? 0, k.budgetNano, month);
        if (w) writes.push(w);
      }
    }
    this.forgetGone();
    await this.apply(writes.slice(0, MAX_WRITES), now);
    return errors.length > 0;
  }

  /** Each account's ledger, READ_CONCURRENCY at a time; an account whose read failed is left out. */
  private async read(items: Array<{ account: string; keys: string[] }>, month: string): Promise<{ readings: Map<string, MonthSpend>; errors: unknown[] }> {
    const readings = new Map<string, MonthSpend>();
    const errors: unknown[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < items.length) {
        const item = items[next++] as { account: string; keys: string[] };
        try {
          readings.set(item.account, await this.ctx.store.monthSpend(item.account, item.keys, month));
        } catch (err) {
          errors.push(err);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, items.length) }, worker));
    return { readings, errors };
  }

  private current(obj: CustomObject): Record<string, unknown> {
    return { ...(obj.status ?? {}), ...(this.written.get(obj.metadata?.uid ?? '') ?? {}) };
  }

  private accountWrite(obj: CustomObject, r: MonthSpend, month: string): Write | null {
    // Before its first publish an account has no ledger: show nothing rather than a zero balance.
    if (r.creditedNano <= 0 && r.spentNano <= 0) return null;
    const threshold = (obj.spec as { lowBalanceThresholdUsd?: unknown } | undefined)?.lowBalanceThresholdUsd;
    const thresholdNano = typeof threshold === 'number' ? usdToNano(threshold) : null;
    const prev = this.current(obj);
    const { status, lowBalanceEvent } = accountSpend({
      month,
      creditedNano: r.creditedNano,
      spentNano: r.spentNano,
      monthNano: r.accountMonthNano,
      thresholdNano,
      previous: prev,
    });
    const w: Write = { kind: 'Account', obj, fields: { ...status } };
    if (lowBalanceEvent && thresholdNano !== null) {
      w.event = { type: 'Warning', reason: 'LowBalance', message: lowBalanceMessage(r.creditedNano - r.spentNano, thresholdNano) };
    }
    return this.due(w, prev);
  }

  private keyWrite(obj: CustomObject, spentNano: number, budgetNano: number | null, month: string): Write | null {
    const prev = this.current(obj);
    const { status, event } = keySpend({ month, spentNano, budgetNano, previous: prev });
    const w: Write = { kind: 'ApiKey', obj, fields: { ...status } };
    if (event && budgetNano !== null) {
      w.event = {
        type: 'Warning',
        reason: event === 'Warning' ? 'KeyBudgetWarning' : 'KeyBudgetExhausted',
        message: budgetMessage(event, budgetPercent(spentNano, budgetNano) ?? 100, spentNano, budgetNano),
      };
    }
    return this.due(w, prev);
  }

  /** The write if a figure changed, or if the figures were last observed too long ago. */
  private due(w: Write, prev: Record<string, unknown>): Write | null {
    if (statusDiff(prev, w.fields).length > 0) return w;
    const observed = typeof prev.spendObservedTime === 'string' ? Date.parse(prev.spendObservedTime) : NaN;
    const stale = !Number.isFinite(observed) || this.ctx.now().getTime() - observed >= observedRefreshMs(this.intervalMs);
    return stale ? w : null;
  }

  private async apply(writes: Write[], now: Date): Promise<void> {
    const { ctx } = this;
    const observed = now.toISOString().replace(/\.\d+Z$/, 'Z');
    for (const w of writes) {
      const name = w.obj.metadata?.name ?? '';
      const fields = { ...w.fields, spendObservedTime: observed };
      try {
        await patchStatus(ctx.clients, w.kind, name, fields);
      } catch (err) {
        ctx.log.warn('Spend status write failed', { [w.kind]: objectKey(ctx, name), error: err });
        continue;
      }
      this.written.set(w.obj.metadata?.uid ?? '', fields);
      this.metrics.spendStatusWrites.inc({ kind: w.kind });
      if (w.event) {
        ctx.log.info(w.event.reason, { [w.kind]: objectKey(ctx, name) });
        await ctx.events.record({ ...w.obj, kind: w.kind }, { ...w.event, action: 'RefreshSpend' });
      }
    }
  }

  private forgetGone(): void {
    const live = new Set<string>();
    for (const kind of ['Account', 'ApiKey'] as const) for (const o of this.ctx.caches[kind].list()) live.add(o.metadata?.uid ?? '');
    for (const uid of this.written.keys()) if (!live.has(uid)) this.written.delete(uid);
  }
}
