// The gauges the chart's alerts need beside the call counters (README: Metrics; charts/svc-gateway PrometheusRule):
// each target's availability state as this gateway last read it from the board, and each key's share of its monthly
// budget. Both are read at scrape time, never on the call path. Labels are configured names only (model, target,
// account, key name), never a key value.
import { Gauge, type Registry } from 'prom-client';
import { STATES, type State } from '../availability/types.ts';
import type { KeyRecord } from '../contract/snapshot.ts';

export interface TargetState {
  model: string;
  target: string;
  state: State;
}

/** Keys with a budget tracked for the budget gauge, at most (a scrape reads the store once per tracked key). */
export const MAX_BUDGET_KEYS = 2_000;

export class AlertMetrics {
  private readTargets: (() => readonly TargetState[]) | null = null;
  private readKeySpend: ((account: string, key: string) => Promise<number>) | null = null;
  /** Keys with a monthly budget that called this process: account/name -> budget (nano-USD). */
  private readonly budgets = new Map<string, { account: string; key: string; budgetNano: number }>();

  constructor(registry: Registry) {
    const registers = [registry];
    const targets = new Gauge({
      name: 'svc_gateway_upstream_state',
      help: "1 for each target's availability state as the probes and live calls set it (board), else 0.",
      labelNames: ['model', 'target', 'state'],
      registers,
      collect: () => {
        targets.reset();
        for (const t of this.readTargets?.() ?? []) for (const s of STATES) targets.set({ model: t.model, target: t.target, state: s }, s === t.state ? 1 : 0);
      },
    });
    const used = new Gauge({
      name: 'svc_gateway_key_budget_used_ratio',
      help: "A key's spend this month over its monthly budget (1 = the budget is used up), for keys with a budget.",
      labelNames: ['account', 'key'],
      registers,
      collect: async () => {
        const rows = await this.keyRatios();
        used.reset();
        for (const r of rows) used.set({ account: r.account, key: r.key }, r.ratio);
      },
    });
  }

  watchTargets(read: () => readonly TargetState[]): void {
    this.readTargets = read;
  }

  watchKeySpend(read: (account: string, key: string) => Promise<number>): void {
    this.readKeySpend = read;
  }

  /** A key that called (admitted or refused): tracked when it has a monthly budget. */
  keySeen(k: KeyRecord): void {
    const id = `${k.account}/${k.name}`;
    if (k.monthlyBudgetNano === null || k.monthlyBudgetNano <= 0) return void this.budgets.delete(id);
    if (!this.budgets.has(id) && this.budgets.size >= MAX_BUDGET_KEYS) return;
    this.budgets.set(id, { account: k.account, key: k.name, budgetNano: k.monthlyBudgetNano });
  }

  private async keyRatios(): Promise<Array<{ account: string; key: string; ratio: number }>> {
    const read = this.readKeySpend;
    if (!read) return [];
    try {
      return await Promise.all([...this.budgets.values()].map(async (b) => ({ ...b, ratio: (await read(b.account, b.key)) / b.budgetNano })));
    } catch {
      // The store is away: no value is better than a stale one.
      return [];
    }
  }
}
