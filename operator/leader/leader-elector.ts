// Leader election on a coordination.k8s.io/v1 Lease, client-go's algorithm: read the lease; take it if it is free,
// ours, or not renewed for its duration (by our clock); write with metadata.resourceVersion as compare-and-swap, so
// of two candidates only one succeeds (409 for the other). The leader renews every retry period and gives up the
// moment it has not renewed for the renew deadline; since that is shorter than the lease duration, it stops before
// any other replica may take over. Giving up is final: the caller exits the process.
import { V1MicroTime, type CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from '../log.ts';
import type { LeaseTiming } from '../options.ts';
import { statusOf } from '../kube/clients.ts';
import { decide, observe, type LeaseRecord, type Observation } from './lease-record.ts';

export interface ElectorOptions extends LeaseTiming {
  api: CoordinationV1Api;
  namespace: string;
  name: string;
  identity: string;
  log: Logger;
  onStartedLeading: () => void;
  /** Called once when leadership is lost; the operator exits there. */
  onStoppedLeading: (reason: string) => void;
}

type Attempt = 'ok' | 'held' | 'failed';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function iso(v: unknown): string | null {
  if (v instanceof Date) return v.toISOString();
  return typeof v === 'string' ? v : null;
}

function recordOf(lease: V1Lease): LeaseRecord {
  const s = lease.spec ?? {};
  return {
    holderIdentity: s.holderIdentity ?? '',
    leaseDurationSeconds: s.leaseDurationSeconds ?? 0,
    acquireTime: iso(s.acquireTime),
    renewTime: iso(s.renewTime),
    leaseTransitions: s.leaseTransitions ?? 0,
  };
}

export class LeaderElector {
  private readonly o: ElectorOptions;
  private observed: Observation | null = null;
  private leading = false;
  private stopped = false;
  private lastRenew = 0;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(opts: ElectorOptions) {
    this.o = opts;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Campaigns until elected, then renews until stopped or lost. */
  async run(): Promise<void> {
    while (!this.stopped && !this.leading) {
      const started = Date.now();
      if ((await this.attempt()) === 'ok') {
        this.lastRenew = started;
        this.leading = true;
        this.o.log.info('Acquired the lease', { Lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity });
        this.watchdog = setInterval(() => this.checkDeadline(), Math.min(250, this.o.retryPeriodMs / 2));
        this.o.onStartedLeading();
        break;
      }
      await sleep(this.o.retryPeriodMs * (1 + Math.random() * 0.2));
    }
    while (!this.stopped && this.leading) {
      await sleep(this.o.retryPeriodMs);
      if (this.stopped || !this.leading) break;
      const started = Date.now();
      const r = await this.attempt();
      if (r === 'ok') this.lastRenew = started;
      else if (r === 'held') this.lose('another replica holds the lease');
    }
  }

  /** Stops campaigning; a leader hands the lease back so a successor need not wait for it to expire. */
  async release(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchdog);
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.o.api.readNamespacedLease({ name: this.o.name, namespace: this.o.namespace });
      if (recordOf(lease).holderIdentity !== this.o.identity) return;
      const now = new V1MicroTime();
      await this.write(lease, { ...recordOf(lease), holderIdentity: '', leaseDurationSeconds: 1, renewTime: now.toISOString() });
      this.o.log.info('Released the lease', { Lease: `${this.o.namespace}/${this.o.name}` });
    } catch (err) {
      this.o.log.warn('Failed to release the lease; it expires on its own', { error: err });
    }
  }

  private checkDeadline(): void {
    if (this.leading && Date.now() - this.lastRenew > this.o.renewDeadlineMs) {
      this.lose(`the lease was not renewed for ${this.o.renewDeadlineMs} ms`);
    }
  }

  private lose(reason: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.stopped = true;
    clearInterval(this.watchdog);
    this.o.onStoppedLeading(reason);
  }

  /** One read and one conditional write, bounded by the renew deadline (a hung request counts as a failure). */
  private async attempt(): Promise<Attempt> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<Attempt>((r) => (timer = setTimeout(() => r('failed'), this.o.renewDeadlineMs)));
    try {
      return await Promise.race([this.tryAcquireOrRenew(), timeout]);
    } catch (err) {
      this.o.log.debug('Failed to acquire or renew the lease', { error: err });
      return 'failed';
    } finally {
      clearTimeout(timer);
    }
  }

  private async tryAcquireOrRenew(): Promise<Attempt> {
    const { api, name, namespace, identity } = this.o;
    const durationSeconds = Math.ceil(this.o.leaseDurationMs / 1000);
    const nowIso = new V1MicroTime().toISOString();
    let lease: V1Lease;
    try {
      lease = await api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      const record: LeaseRecord = {
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: nowIso,
        renewTime: nowIso,
        leaseTransitions: 0,
      };
      await api.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec: specOf(record) } });
      return 'ok';
    }
    const current = recordOf(lease);
    this.observed = observe(this.observed, current, Date.now());
    const d = decide(current, this.observed, { identity, durationSeconds }, Date.now());
    if (d.kind === 'held') return 'held';
    await this.write(lease, d.record);
    return 'ok';
  }

  private async write(lease: V1Lease, record: LeaseRecord): Promise<void> {
    const { name, namespace } = this.o;
    await this.o.api.replaceNamespacedLease({
      name,
      namespace,
      body: { metadata: { name, namespace, resourceVersion: lease.metadata?.resourceVersion }, spec: specOf(record) },
    });
  }
}

function specOf(r: LeaseRecord): V1Lease['spec'] {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: r.acquireTime ? new V1MicroTime(r.acquireTime) : undefined,
    renewTime: r.renewTime ? new V1MicroTime(r.renewTime) : undefined,
    leaseTransitions: r.leaseTransitions,
  };
}
