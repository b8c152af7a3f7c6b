// The leader's MoneyDrift Events: the usage exporter's reconciliation compares Redis's money with the Postgres ledger
// and publishes what it found in Redis (gateway/contract/money-drift.ts); every POLL_MS the leader reads that and
// records a Warning Event on each Account with a drift, once per amount: a drift that stays is told once, a new amount
// is told again, and one that went away and comes back is told again. A new leader tells the drifts present once more.
// The log line and the metric stay the exporter's (one source of truth); this only carries them to Kubernetes.
import { driftId, driftText, type Drift } from '../../gateway/contract/money-drift.ts';
import type { ControllerContext } from './context.ts';

/** How often the leader reads the exporter's findings (one GET of a small key). */
export const DRIFT_POLL_MS = 2000;

export const DRIFT_REASON = 'MoneyDrift';

export function driftEventMessage(d: Drift): string {
  return `${driftText(d)} (${d.driftNano} nano-USD), found by the usage exporter's reconciliation. The Postgres ledger is the record: until Redis agrees with it again, admission reads Redis's figure.`;
}

export class DriftEvents {
  private readonly ctx: ControllerContext;
  private readonly everyMs: number;
  /** The amount last told per account and field. */
  private readonly told = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(ctx: ControllerContext, everyMs = DRIFT_POLL_MS) {
    this.ctx = ctx;
    this.everyMs = everyMs;
  }

  start(): void {
    if (this.stopped) return;
    this.running = this.tick().finally(() => {
      this.running = null;
      if (!this.stopped) this.timer = setTimeout(() => this.start(), this.everyMs);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One read; never throws (Redis unreachable: logged at debug, tried again next time). */
  async tick(): Promise<void> {
    let drifts: Drift[];
    try {
      drifts = await this.ctx.store.moneyDrift();
    } catch (err) {
      this.ctx.log.debug('Could not read the money drift the exporter published; trying again', { error: err });
      return;
    }
    const now = new Set<string>();
    for (const d of drifts) {
      const id = driftId(d);
      now.add(id);
      if (this.told.get(id) === d.driftNano) continue;
      this.told.set(id, d.driftNano);
      const obj = this.ctx.caches.Account.get(d.account);
      if (!obj) continue;
      await this.ctx.events.record(obj, { type: 'Warning', reason: DRIFT_REASON, action: 'Reconcile', message: driftEventMessage(d) });
    }
    for (const id of [...this.told.keys()]) if (!now.has(id)) this.told.delete(id);
  }
}
