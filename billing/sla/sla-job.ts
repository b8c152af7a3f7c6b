// The SLA job: on a timer (at start, then hourly by default) in every process that holds the billing ledger (npm start,
// and each console replica in a cluster), for every account with Account.spec.billing.sla, the previous UTC month's
// SLA (billing/sla/sla.ts) once that month has ended and settled. The credit is one billing-ledger step with id
// sla-YYYY-MM, so however many replicas run the job, however often, and across restarts, it is applied exactly once.
import type { History } from '../../gateway/availability/history.ts';
import type { BillingLedger, BillingResult } from '../../gateway/state/billing-ledger.ts';
import { runSla, type SlaOutcome } from './sla.ts';
import { monthRange, type AccountBilling, type StatementSource } from '../statements/statement.ts';

export const SLA_JOB_INTERVAL_MS = 3_600_000;
/** How long after the month's end the job waits, so the month's last usage has reached the statement source. */
export const SLA_SETTLE_MS = 3_600_000;

export interface SlaJobOptions {
  ledger: BillingLedger;
  source: StatementSource;
  history: Pick<History, 'segments'>;
  /** The accounts and their Account.spec.billing (those without `sla` are skipped). */
  accounts(): Promise<Array<{ account: string; billing: AccountBilling | null }>>;
  /** With DATABASE_URL: copies the account's ledger entries to Postgres ledger_credits (idempotent). */
  copyToPostgres?(account: string): Promise<void>;
  now?: () => number;
  intervalMs?: number;
  settleMs?: number;
  onResult?(account: string, outcome: SlaOutcome, result: BillingResult | null): void;
  onError?(err: unknown, account: string | null): void;
}

export interface SlaJobRun {
  account: string;
  month: string;
  outcome: SlaOutcome;
  result: BillingResult | null;
}

/** YYYY-MM of the UTC month before the one `now` is in. */
export function previousMonth(now: number): string {
  const d = new Date(now);
  const prev = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1));
  return `${prev.getUTCFullYear()}-${String(prev.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month the job settles at `now`: the previous one, once `settleMs` has passed since it ended; else null. */
export function dueMonth(now: number, settleMs = SLA_SETTLE_MS): string | null {
  const month = previousMonth(now);
  const r = monthRange(month);
  return r && now >= r.end + settleMs ? month : null;
}

/** One round: every account with an SLA, the due month; an account whose month is done is skipped afterwards. */
export class SlaJob {
  private readonly done = new Set<string>();
  private running: Promise<SlaJobRun[]> | null = null;

  private readonly o: SlaJobOptions;

  constructor(o: SlaJobOptions) {
    this.o = o;
  }

  /** Resolves when no round is under way. */
  async idle(): Promise<void> {
    await this.running?.catch(() => []);
  }

  /** Runs a round (a round already under way is joined, not doubled). */
  round(): Promise<SlaJobRun[]> {
    this.running ??= this.roundOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async roundOnce(): Promise<SlaJobRun[]> {
    const now = (this.o.now ?? Date.now)();
    const month = dueMonth(now, this.o.settleMs);
    if (!month) return [];
    const out: SlaJobRun[] = [];
    let accounts: Awaited<ReturnType<SlaJobOptions['accounts']>>;
    try {
      accounts = await this.o.accounts();
    } catch (err) {
      this.o.onError?.(err, null);
      return out;
    }
    for (const { account, billing } of accounts) {
      const key = `${account}\n${month}`;
      if (!billing?.sla || this.done.has(key)) continue;
      try {
        const r = await runSla({ source: this.o.source, history: this.o.history, ledger: this.o.ledger }, account, billing, month, now);
        if (!r) continue;
        if (r.result) await this.o.copyToPostgres?.(account);
        this.done.add(key);
        this.o.onResult?.(account, r.outcome, r.result);
        out.push({ account, month, outcome: r.outcome, result: r.result });
      } catch (err) {
        this.o.onError?.(err, account);
      }
    }
    return out;
  }
}

export interface RunningSlaJob {
  job: SlaJob;
  stop(): Promise<void>;
}

/** Starts the job: a round now and one every `intervalMs` (the timer does not keep the process alive). */
export function startSlaJob(o: SlaJobOptions): RunningSlaJob {
  const job = new SlaJob(o);
  const tick = (): void => void job.round().catch((err: unknown) => o.onError?.(err, null));
  tick();
  const timer = setInterval(tick, o.intervalMs ?? SLA_JOB_INTERVAL_MS);
  timer.unref();
  return {
    job,
    stop: async () => {
      clearInterval(timer);
      await job.idle();
    },
  };
}
