// Settlements that failed (Redis unreachable) are retried in the background: settle is idempotent per hold id,
// so a retry never charges twice, and the ledger still gets the actual cost once Redis is back.
import type { Hold, Settlement } from './store.ts';

interface Pending {
  hold: Hold;
  s: Settlement;
  /** Past this time the hold has expired in the store; retrying is still safe within the settled-id memory. */
  until: number;
}

const MAX_PENDING = 10_000;
const INTERVAL_MS = 1000;

export class SettleRetries {
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private readonly run: (hold: Hold, s: Settlement) => Promise<void>;
  private readonly holdTtlMs: number;
  private readonly warn: (message: string, err?: unknown) => void;

  constructor(run: (hold: Hold, s: Settlement) => Promise<void>, holdTtlMs: number, warn: (message: string, err?: unknown) => void) {
    this.run = run;
    this.holdTtlMs = holdTtlMs;
    this.warn = warn;
  }

  get size(): number {
    return this.pending.size;
  }

  add(hold: Hold, s: Settlement, err: unknown): void {
    if (this.pending.size >= MAX_PENDING) {
      this.warn(`Dropped the settlement of call ${hold.id}: too many settlements waiting for Redis; its hold will expire`, err);
      return;
    }
    this.warn(`Settling call ${hold.id} failed; retrying in the background`, err);
    this.pending.set(hold.id, { hold, s, until: Date.now() + this.holdTtlMs });
    this.timer ??= setInterval(() => void this.retry(), INTERVAL_MS).unref();
  }

  /** One more attempt for every pending settlement (called on close). */
  async flush(): Promise<void> {
    await this.retry();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async retry(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.attemptAll();
    } finally {
      this.running = false;
    }
  }

  private async attemptAll(): Promise<void> {
    for (const [id, p] of this.pending) {
      if (Date.now() > p.until) {
        this.pending.delete(id);
        this.warn(`Gave up settling call ${id}: Redis stayed unreachable beyond the hold's lifetime`);
        continue;
      }
      try {
        await this.run(p.hold, p.s);
        this.pending.delete(id);
      } catch {
        return; // still down: try again at the next tick
      }
    }
    if (this.pending.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
