// Prometheus metrics of the operator. Labels are bounded: kind (five values) and result (three); never object names
// but one: svc_gateway_keys_expiring is by account (as the gateway's balance gauge), named as the issue asked so a
// dashboard finds it beside the gateway's metrics.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics } from '../gateway/lifecycle/process-metrics.ts';

export type Result = 'success' | 'error' | 'requeue';

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<'kind' | 'result'>;
  readonly reconcileErrors: Counter<'kind'>;
  readonly reconcileDuration: Histogram<'kind'>;
  readonly publishes: Counter;
  readonly leader: Gauge;
  readonly watchRestarts: Counter<'kind'>;
  readonly queueDepth: Gauge<'kind'>;
  readonly spendRefreshes: Counter<'result'>;
  readonly spendRefreshDuration: Histogram;
  readonly spendStatusWrites: Counter<'kind'>;
  readonly offboardChecks: Counter<'result'>;
  private expiring: () => Array<{ account: string; keys: number }> = () => [];

  constructor() {
    const registers = [this.registry];
    collectProcessMetrics(this.registry);
    this.reconciles = new Counter({ name: 'svc_operator_reconcile_total', help: 'Reconciles by kind and result.', labelNames: ['kind', 'result'], registers });
    this.reconcileErrors = new Counter({
      name: 'svc_operator_reconcile_errors_total',
      help: 'Reconciles that failed (retried with backoff), by kind.',
      labelNames: ['kind'],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'svc_operator_reconcile_duration_seconds',
      help: 'Time of one reconcile, by kind.',
      labelNames: ['kind'],
      registers,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    });
    this.publishes = new Counter({ name: 'svc_operator_config_publish_total', help: 'Config snapshots published to Redis.', registers });
    this.leader = new Gauge({ name: 'svc_operator_leader', help: '1 while this replica holds the lease and writes, else 0.', registers });
    this.watchRestarts = new Counter({
      name: 'svc_operator_watch_restarts_total',
      help: 'Watches restarted after an error, by kind.',
      labelNames: ['kind'],
      registers,
    });
    this.queueDepth = new Gauge({ name: 'svc_operator_queue_depth', help: 'Keys waiting or being reconciled, by kind.', labelNames: ['kind'], registers });
    this.spendRefreshes = new Counter({
      name: 'svc_operator_spend_refresh_total',
      help: 'Spend refreshes of Account and ApiKey status, by result (error: some ledger could not be read from Redis; its status was left alone).',
      labelNames: ['result'],
      registers,
    });
    this.spendRefreshDuration = new Histogram({
      name: 'svc_operator_spend_refresh_duration_seconds',
      help: 'Time of one spend refresh: the ledger reads and the status writes.',
      registers,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    });
    this.spendStatusWrites = new Counter({
      name: 'svc_operator_spend_status_writes_total',
      help: 'Status patches made by the spend refresh (only when a figure changed), by kind.',
      labelNames: ['kind'],
      registers,
    });
    this.offboardChecks = new Counter({
      name: 'svc_operator_offboard_checks_total',
      help: 'Owners of self-service keys asked about (Account selfService.revokeOnOffboard), by result: kept (a right left), revoked (none: their keys revoked), error (the review failed; asked again next time).',
      labelNames: ['result'],
      registers,
    });
    const source = (): Array<{ account: string; keys: number }> => this.expiring();
    new Gauge({
      name: 'svc_gateway_keys_expiring',
      help: 'ApiKeys that expire within 14 days (not expired, not revoked), by account; reported by the leading operator.',
      labelNames: ['account'],
      registers,
      collect(this: Gauge<'account'>): void {
        this.reset();
        for (const e of source()) this.set({ account: e.account }, e.keys);
      },
    });
  }

  /** Where svc_gateway_keys_expiring is read from at each scrape (the leader's compiled keys). */
  watchKeyExpiry(source: () => Array<{ account: string; keys: number }>): void {
    this.expiring = source;
  }
}
