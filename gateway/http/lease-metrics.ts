// Prometheus metrics of leased admission (SVC_ADMISSION_LEASES=1, gateway/state/leases.ts), read at scrape time from
// the process's counts: leases held now, lease requests by outcome, and admitted calls by path (lease or per call).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { LeaseCounts } from '../state/leases.ts';

export interface LeaseSource {
  readonly held: number;
  readonly counts: LeaseCounts;
}

export function watchLeases(registry: Registry, leases: LeaseSource): void {
  const registers = [registry];
  new Gauge({
    name: 'svc_gateway_admission_leases_active',
    help: 'Admission leases this process holds now (one per key it admits calls for locally).',
    registers,
    collect() {
      this.set(leases.held);
    },
  });
  new Counter({
    name: 'svc_gateway_admission_lease_grants_total',
    help: 'Lease requests to Redis by outcome: granted, refused (the key near a cap, revoked, expiring, or its leases asked back), failed (Redis did not answer).',
    labelNames: ['outcome'],
    registers,
    collect() {
      this.reset();
      for (const outcome of ['granted', 'refused', 'failed'] as const) this.inc({ outcome }, leases.counts.grants[outcome]);
    },
  });
  new Counter({
    name: 'svc_gateway_admission_calls_total',
    help: 'Calls admitted with leases on, by path: lease (from a slice held by this process, no Redis round trip) or per_call (one admission script in Redis).',
    labelNames: ['path'],
    registers,
    collect() {
      this.reset();
      for (const path of ['lease', 'per_call'] as const) this.inc({ path }, leases.counts.admitted[path]);
    },
  });
}
