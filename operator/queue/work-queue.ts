// A keyed work queue in the shape of client-go's: a key waits at most once (adds while it waits are merged), one
// key is never processed twice at the same time (an add while it runs makes it run once more afterwards), and a
// failed key is retried with per-key exponential backoff, reset by its next success.
export interface WorkQueueOptions {
  /** Keys processed at the same time (different keys only). Default 2. */
  concurrency?: number;
  /** First retry delay after a failure; doubles per consecutive failure of the key. Default 100 ms. */
  baseDelayMs?: number;
  /** Longest retry delay. Default 30 s. */
  maxDelayMs?: number;
}

/** What a handler may ask for besides success or a thrown error. */
export interface Outcome {
  requeueAfterMs?: number;
}

export type Handler = (key: string) => Promise<Outcome | void>;

export class WorkQueue {
  private readonly handler: Handler;
  private readonly onError: (key: string, err: unknown, retryInMs: number) => void;
  private readonly concurrency: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly waiting = new Set<string>(); // insertion order is FIFO order
  /** Keys run before every waiting one (addFirst), in their own FIFO order. */
  private readonly first = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  private idle: Array<() => void> = [];
  private stopped = false;

  constructor(handler: Handler, onError: (key: string, err: unknown, retryInMs: number) => void, opts: WorkQueueOptions = {}) {
    this.handler = handler;
    this.onError = onError;
    this.concurrency = opts.concurrency ?? 2;
    this.baseDelayMs = opts.baseDelayMs ?? 100;
    this.maxDelayMs = opts.maxDelayMs ?? 30_000;
  }

  add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.first.has(key)) return;
    this.waiting.add(key);
    this.pump();
  }

  /**
   * Adds the key ahead of every key waiting (one waiting already moves up): a short re-check that must not wait behind
   * a full resync of tens of thousands of objects. Running now: it runs once more when done, like add().
   */
  addFirst(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    this.waiting.delete(key);
    this.first.add(key);
    this.pump();
  }

  /** Adds the key after a delay; of two pending delayed adds of one key, the sooner wins. */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    const at = Date.now() + ms;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, { timer, at });
  }

  /** Keys waiting or running. */
  get depth(): number {
    return this.first.size + this.waiting.size + this.processing.size;
  }

  /** Resolves when nothing waits or runs (tests). */
  drained(): Promise<void> {
    if (this.depth === 0) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  /** Stops taking work and waits for the keys in flight. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    this.waiting.clear();
    this.first.clear();
    this.dirty.clear();
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    await this.drained();
  }

  private pump(): void {
    while (!this.stopped && this.processing.size < this.concurrency) {
      const key = this.first.size > 0 ? this.first.values().next() : this.waiting.values().next();
      if (key.done) break;
      this.first.delete(key.value);
      this.waiting.delete(key.value);
      this.processing.add(key.value);
      void this.run(key.value);
    }
    if (this.depth === 0) {
      const waiters = this.idle;
      this.idle = [];
      for (const r of waiters) r();
    }
  }

  private async run(key: string): Promise<void> {
    try {
      const out = await this.handler(key);
      this.failures.delete(key);
      if (out?.requeueAfterMs !== undefined) this.addAfter(key, out.requeueAfterMs);
    } catch (err) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const delay = Math.min(this.baseDelayMs * 2 ** (n - 1), this.maxDelayMs);
      this.onError(key, err, delay);
      this.addAfter(key, delay);
    } finally {
      this.processing.delete(key);
      if (this.dirty.delete(key)) this.waiting.add(key);
      this.pump();
    }
  }
}
