// Runs the controllers: one informer per kind (and Secrets), one work queue per controller, events mapped to the
// keys they affect, and a periodic resync that reconciles everything again (watches can go quiet; expiry moves
// without events). Nothing is reconciled before every cache has listed once: a half-filled cache
// would publish a config without the keys it has not seen yet.
import type { CrKind } from '../kube/clients.ts';
import type { OperatorMetrics } from '../metrics.ts';
import { WorkQueue, type Outcome } from '../queue/work-queue.ts';
import { AccountController } from './account.controller.ts';
import { ApiKeyController } from './api-key.controller.ts';
import { forgetCompiled } from './compiled.ts';
import { CONFIG_KEY, ConfigController } from './config.controller.ts';
import { storedVerdict } from './conditions.ts';
import type { ControllerContext, Reconciler } from './context.ts';
import { dependents, forgetKeySecrets, type Work } from './dependents.ts';
import { McpServerController } from './mcp-server.controller.ts';
import { GuardrailController } from './guardrail.controller.ts';
import { ModelRouteController } from './model-route.controller.ts';
import { PlanController } from './plan.controller.ts';

type QueueKind = CrKind | 'Config';
const NOT_SYNCED_RETRY_MS = 100;
/**
 * Objects of one kind reconciled at the same time (never one object twice): a reconcile mostly waits on the API
 * server and Redis, so a resync of thousands of ApiKeys is bounded by these round trips, not by the CPU. The config
 * is compiled and published by one at a time.
 */
const RECONCILE_CONCURRENCY = 8;

export class ControllerManager {
  private readonly ctx: ControllerContext;
  private readonly metrics: OperatorMetrics;
  private readonly resyncMs: number;
  private readonly config: ConfigController;
  private readonly queues: Record<QueueKind, WorkQueue>;
  private resyncTimer: NodeJS.Timeout | undefined;
  private allSynced = false;
  private readonly generations = new Map<string, number>();
  private published: () => void = () => {};

  constructor(ctx: ControllerContext, metrics: OperatorMetrics, resyncMs: number) {
    this.ctx = ctx;
    this.metrics = metrics;
    this.resyncMs = resyncMs;
    this.config = new ConfigController(ctx, () => {
      metrics.publishes.inc();
      // Key records and credits just changed in Redis: let the Accounts' statuses catch up (balance and spend come
      // from the spend refresh, spend-status.ts, on its own cadence).
      for (const a of ctx.caches.Account.list()) this.enqueue(['Account', a.metadata?.name ?? '']);
      // Keys that were waiting for a publish: looked at again first (most now Active), not behind a resync of every key.
      for (const k of ctx.caches.ApiKey.list()) {
        if (storedVerdict(k.status)?.reason === 'Publishing' && k.metadata?.name) this.queues.ApiKey.addFirst(k.metadata.name);
      }
      this.published();
    });
    const reconcilers: Reconciler[] = [
      new PlanController(ctx),
      new AccountController(ctx),
      new ApiKeyController(ctx),
      new ModelRouteController(ctx),
      new McpServerController(ctx),
      new GuardrailController(ctx),
      this.config,
    ];
    const queues: Partial<Record<QueueKind, WorkQueue>> = {};
    for (const r of reconcilers) queues[r.kind] = this.queueFor(r);
    this.queues = queues as Record<QueueKind, WorkQueue>;
  }

  /** Called after each config publish (credits and keys may have reached the ledger). */
  onPublished(fn: () => void): void {
    this.published = fn;
  }

  get synced(): boolean {
    return this.allSynced;
  }

  /** Starts the informers, waits until each has listed once, then reconciles everything. */
  async start(): Promise<void> {
    const { caches } = this.ctx;
    for (const kind of ['Plan', 'Account', 'ApiKey', 'ModelRoute', 'McpServer', 'Guardrail', 'Secret'] as const) {
      caches[kind].onChange((name) => {
        // A status written (every probe round writes a ModelRoute's) changes nothing the compile reads: the compile is
        // kept, or 2,000 routes probed would compile the namespace 2,000 times (and each ApiKey's reconcile again).
        const changed = kind === 'Secret' || this.specChanged(kind, name);
        if (changed && kind === 'ApiKey') forgetKeySecrets(caches);
        const work = changed ? dependents(caches, kind, name) : [[kind, name] as const];
        // Before any work is enqueued: it may start at once, and must not read the compile of the caches before. An
        // ApiKey, or a Secret only ApiKeys read (one per key in a resync), leaves the compile of the other kinds.
        const keysOnly = kind === 'ApiKey' || (kind === 'Secret' && work.length > 0 && work.every(([k]) => k === 'ApiKey' || k === 'Config'));
        if (changed) forgetCompiled(caches, keysOnly);
        for (const w of work) this.enqueue(w);
      });
    }
    await Promise.all(Object.values(caches).map((i) => i.start()));
    this.allSynced = true;
    this.ctx.log.info('Caches synced; reconciling everything');
    this.resyncAll();
    this.resyncTimer = setInterval(() => this.resyncAll(), this.resyncMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.resyncTimer);
    await Promise.all(Object.values(this.queues).map((q) => q.shutdown()));
    await Promise.all(Object.values(this.ctx.caches).map((i) => i.stop()));
  }

  /** Waits until no queue holds work (tests). */
  async idle(): Promise<void> {
    await Promise.all(Object.values(this.queues).map((q) => q.drained()));
  }

  /**
   * Whether a custom resource changed in a way others depend on: added, deleted, or a new generation (spec, or a
   * deletion starting). Status and metadata writes (ours, mostly) reconcile only the object itself.
   */
  private specChanged(kind: CrKind, name: string): boolean {
    const id = `${kind}/${name}`;
    const generation = this.ctx.caches[kind].get(name)?.metadata?.generation;
    const known = this.generations.has(id);
    const changed = !known || generation === undefined || this.generations.get(id) !== generation;
    if (generation === undefined) this.generations.delete(id);
    else this.generations.set(id, generation);
    return changed;
  }

  private resyncAll(): void {
    this.config.forget();
    for (const kind of ['Plan', 'Account', 'ApiKey', 'ModelRoute', 'McpServer', 'Guardrail'] as const) {
      for (const o of this.ctx.caches[kind].list()) this.enqueue([kind, o.metadata?.name ?? '']);
    }
    this.enqueue(['Config', CONFIG_KEY]);
  }

  private enqueue([kind, name]: Work): void {
    if (!name) return;
    this.queues[kind].add(name);
    this.metrics.queueDepth.set({ kind }, this.queues[kind].depth);
  }

  private queueFor(r: Reconciler): WorkQueue {
    const log = this.ctx.log;
    const m = this.metrics;
    const handler = async (name: string): Promise<Outcome | void> => {
      if (!this.allSynced) return { requeueAfterMs: NOT_SYNCED_RETRY_MS };
      const end = m.reconcileDuration.startTimer({ kind: r.kind });
      try {
        const out = await r.reconcile(name);
        m.reconciles.inc({ kind: r.kind, result: out?.requeueAfterMs === undefined ? 'success' : 'requeue' });
        return out;
      } finally {
        end();
        m.queueDepth.set({ kind: r.kind }, this.queues[r.kind].depth - 1);
      }
    };
    return new WorkQueue(
      handler,
      (name, err, retryInMs) => {
        m.reconciles.inc({ kind: r.kind, result: 'error' });
        m.reconcileErrors.inc({ kind: r.kind });
        log.warn('Reconcile failed; retrying', { [r.kind]: `${this.ctx.clients.namespace}/${name}`, retryInMs, error: err });
      },
      { concurrency: r.kind === 'Config' ? 1 : RECONCILE_CONCURRENCY },
    );
  }
}
