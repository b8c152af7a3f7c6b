// Graceful shutdown (SIGTERM, a rolling restart): /readyz turns 503 at once and no new connection is accepted;
// calls in flight may finish within a budget (SVC_DRAIN_SECONDS). Past it they end now: a stream with an explicit
// error event (never a clean end), a call still waiting for its upstream with 503 + retry-after. Either way each
// call settles its hold and records its usage event before run() resolves; the caller then closes the stores
// (which flushes usage) and exits. The pipeline sees this class only as a CallLifecycle.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/catalog.ts';
import type { CallLifecycle } from '../pipeline/context.ts';

export const DEFAULT_DRAIN_SECONDS = 30;
/** After the budget: time for cut calls to settle, and for connections to close, before they are destroyed. */
const GRACE_MS = 5_000;

export const SHUTTING_DOWN_MESSAGE = 'The gateway is shutting down and ended the call before it was complete; retry it.';

/** SVC_DRAIN_SECONDS: how long calls in flight may take to finish after SIGTERM (0 = end them at once). */
export function drainSeconds(env: Record<string, string | undefined>): number {
  const v = env.SVC_DRAIN_SECONDS;
  if (v === undefined || v === '') return DEFAULT_DRAIN_SECONDS;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`SVC_DRAIN_SECONDS must be a number of seconds >= 0, got ${JSON.stringify(v)}`);
  return n;
}

export interface DrainReport {
  /** Calls in flight when draining started (or arriving on a connection already open). */
  inFlight: number;
  /** Calls the budget did not cover, ended with an error event or a 503. */
  cut: number;
  ms: number;
}

export class Drain implements CallLifecycle {
  private calls = 0;
  private seen = 0;
  private draining_ = false;
  private readonly waiters = new Set<() => void>();
  private readonly cut = new AbortController();

  get draining(): boolean {
    return this.draining_;
  }

  get ending(): AbortSignal {
    return this.cut.signal;
  }

  get inFlight(): number {
    return this.calls;
  }

  async track<T>(call: () => Promise<T>): Promise<T> {
    this.calls++;
    if (this.draining_) this.seen++;
    try {
      return await call();
    } finally {
      if (--this.calls === 0) for (const wake of this.waiters) wake();
    }
  }

  /** Drains `app` (its in-flight calls, then its connections) within `budgetMs` plus a short grace. */
  async run(app: FastifyInstance, budgetMs: number, log: FastifyBaseLogger): Promise<DrainReport> {
    const started = Date.now();
    this.draining_ = true;
    this.seen = this.calls;
    log.info({ inFlight: this.calls, budgetSeconds: budgetMs / 1000 }, 'Draining: not ready, accepting no new connections');
    // Stops listening; requests on connections already open get 503 + `connection: close` (return503OnClosing).
    const closed = app.close();
    let cut = 0;
    if (!(await this.idle(budgetMs))) {
      cut = this.calls;
      log.warn({ calls: cut }, 'Drain budget spent: ending the calls still in flight');
      this.cut.abort(new GatewayError('shutting_down', SHUTTING_DOWN_MESSAGE, { retryAfterSec: 1 }));
      if (!(await this.idle(GRACE_MS))) log.error({ calls: this.calls }, 'Calls did not settle within the grace period');
    }
    // Connections of finished calls stay open (keep-alive) until closed here.
    app.server.closeIdleConnections();
    if (!(await within(closed, GRACE_MS))) app.server.closeAllConnections();
    await closed;
    const report = { inFlight: this.seen, cut, ms: Date.now() - started };
    log.info(report, 'Drained');
    return report;
  }

  /** Resolves true once no call is in flight, false if `ms` passed first. */
  private idle(ms: number): Promise<boolean> {
    if (this.calls === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(ok);
      };
      const wake = (): void => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.waiters.add(wake);
    });
  }
}

function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
  return Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}
