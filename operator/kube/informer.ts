// A client-node informer (LIST, then WATCH from its resourceVersion; a local cache) made to keep running:
// client-node stops an informer on any error other than 410 and a timeout, so this one restarts it with backoff,
// and a shutdown flag keeps stop()'s own AbortError from reviving it. Events carry only "this name changed":
// controllers read the cache and reconcile by level.
import { makeInformer, type Informer, type KubeConfig, type KubernetesListObject, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import type { Logger } from '../log.ts';

export interface WatchSpec<T extends KubernetesObject> {
  /** Kind name, for logs and metrics. */
  kind: string;
  /** API path of the collection, e.g. /apis/gateway.svc.dev/v1alpha1/namespaces/ns/apikeys. */
  path: string;
  /** The namespace watched (the cache is keyed by namespace, then name). */
  namespace: string;
  list: () => Promise<KubernetesListObject<T>>;
}

export interface InformerOptions {
  log: Logger;
  /** First restart delay after an error; doubles up to maxRestartDelayMs. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
  onRestart?: (kind: string) => void;
}

export class ResilientInformer<T extends KubernetesObject> {
  readonly kind: string;
  private readonly namespace: string;
  private readonly inner: Informer<T> & ObjectCache<T>;
  private readonly opts: InformerOptions;
  private readonly listeners: Array<(name: string) => void> = [];
  private shuttingDown = false;
  private errors = 0;
  private delayMs: number;
  private restartTimer: NodeJS.Timeout | undefined;
  private hasSynced = false;
  private syncWaiters: Array<() => void> = [];

  constructor(kc: KubeConfig, spec: WatchSpec<T>, opts: InformerOptions) {
    this.kind = spec.kind;
    this.namespace = spec.namespace;
    this.opts = opts;
    this.delayMs = opts.restartDelayMs ?? 500;
    this.inner = makeInformer(kc, spec.path, spec.list);
    // First: the cached object (client-node stores the object it then hands to these listeners) without its
    // managedFields, which nothing here reads and every write only patches: about half of what each ApiKey and Secret
    // held in the cache, so tens of thousands of keys fit the operator's memory limit.
    const strip = (obj: T): void => {
      if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
    };
    this.inner.on('add', strip);
    this.inner.on('update', strip);
    const changed = (obj: T): void => {
      const name = obj.metadata?.name;
      if (name) for (const l of this.listeners) l(name);
    };
    this.inner.on('add', changed);
    this.inner.on('update', changed);
    this.inner.on('delete', changed);
    this.inner.on('error', (err: unknown) => this.failed(err));
  }

  /** Called with the object's name on every add, update and delete. */
  onChange(listener: (name: string) => void): void {
    this.listeners.push(listener);
  }

  get synced(): boolean {
    return this.hasSynced;
  }

  get(name: string): T | undefined {
    return this.inner.get(name, this.namespace);
  }

  list(): readonly T[] {
    return this.inner.list(this.namespace);
  }

  /** Starts watching; resolves once the first LIST has filled the cache (retrying until then). */
  async start(): Promise<void> {
    const synced = new Promise<void>((r) => this.syncWaiters.push(r));
    await this.run();
    await synced;
  }

  async stop(): Promise<void> {
    this.shuttingDown = true;
    clearTimeout(this.restartTimer);
    await this.inner.stop();
  }

  private async run(): Promise<void> {
    if (this.shuttingDown) return;
    const before = this.errors;
    await this.inner.start();
    // start() resolves after the LIST and the opening of the WATCH; an error on the way fired `error` instead.
    if (this.errors !== before || this.shuttingDown) return;
    this.delayMs = this.opts.restartDelayMs ?? 500;
    if (!this.hasSynced) {
      this.hasSynced = true;
      for (const r of this.syncWaiters) r();
      this.syncWaiters = [];
    }
  }

  private failed(err: unknown): void {
    this.errors++;
    if (this.shuttingDown) return; // stop() delivers an AbortError here: not a reason to restart
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.opts.maxRestartDelayMs ?? 5_000);
    this.opts.log.warn('Watch failed; restarting it', { kind: this.kind, retryInMs: delay, error: err });
    this.opts.onRestart?.(this.kind);
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      void this.run().catch((e: unknown) => this.failed(e));
    }, delay);
  }
}
