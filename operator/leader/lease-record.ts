// client-go's leader election decision on a coordination.k8s.io/v1 Lease, as a pure function. Expiry is judged by
// the candidate's own clock: the time it first saw the current record, plus the record's lease duration, so clock
// skew between replicas does not matter.
export interface LeaseRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string | null;
  renewTime: string | null;
  leaseTransitions: number;
}

export interface Observation {
  /** The record as last read, compared whole to notice a renewal. */
  record: LeaseRecord;
  /** Local time (ms) at which this record was first seen. */
  at: number;
}

export type Decision = { kind: 'held'; holder: string; expiresInMs: number } | { kind: 'take'; record: LeaseRecord };

export function sameRecord(a: LeaseRecord, b: LeaseRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.renewTime === b.renewTime &&
    a.acquireTime === b.acquireTime &&
    a.leaseTransitions === b.leaseTransitions &&
    a.leaseDurationSeconds === b.leaseDurationSeconds
  );
}

export interface Candidate {
  identity: string;
  durationSeconds: number;
}

/** What to do with the lease as read at local time `now` (ms), which is also the renewTime written. */
export function decide(current: LeaseRecord, observed: Observation, me: Candidate, now: number): Decision {
  const { identity, durationSeconds } = me;
  const nowIso = new Date(now).toISOString();
  const mine = current.holderIdentity === identity;
  const expiresAt = observed.at + current.leaseDurationSeconds * 1000;
  if (current.holderIdentity !== '' && !mine && expiresAt > now) {
    return { kind: 'held', holder: current.holderIdentity, expiresInMs: expiresAt - now };
  }
  return {
    kind: 'take',
    record: {
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: mine ? current.acquireTime : nowIso,
      renewTime: nowIso,
      leaseTransitions: mine ? current.leaseTransitions : current.leaseTransitions + 1,
    },
  };
}

/** Updates the observation: a record that changed since the last read restarts its expiry clock. */
export function observe(previous: Observation | null, record: LeaseRecord, now: number): Observation {
  return previous && sameRecord(previous.record, record) ? previous : { record, at: now };
}
