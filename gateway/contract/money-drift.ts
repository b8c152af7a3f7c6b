// A drift between Redis's money (the working copy admission reads) and the Postgres ledger (the record), as the usage
// exporter's reconciliation finds it (gateway/usage/exporter/reconcile.ts). The exporter logs it and publishes what
// its last check found in one Redis key (<p>:money:drift, a JSON record that expires when no check renews it); the
// operator's leader, which has Kubernetes access, reads it and records each drift as an Event on the
// Account. One wording for the log line and the Event.
import { usdWords } from './money.ts';

export type DriftField = 'credited' | 'spent';

export interface Drift {
  account: string;
  field: DriftField;
  /** Redis minus the record (nano-USD): above 0, Redis would let the account spend money it does not have. */
  driftNano: number;
}

/** "Redis's spent is above the Postgres ledger's by 0.000012345 USD" (exact, never in exponent notation). */
export function driftText(d: Drift): string {
  return `Redis's ${d.field} is ${d.driftNano > 0 ? 'above' : 'below'} the Postgres ledger's by ${usdWords(Math.abs(d.driftNano))} USD`;
}

/** The exporter's log line. */
export function driftLogMessage(d: Drift): string {
  return `Money drift: account ${d.account}: ${driftText(d)}`;
}

/** What <p>:money:drift holds: the drifts the last reconciliation found (none: an empty list) and when it ended. */
export interface DriftRecord {
  checkedAt: string;
  drifts: Drift[];
}

export function driftRecordJson(drifts: readonly Drift[], checkedAt: Date): string {
  return JSON.stringify({ checkedAt: checkedAt.toISOString(), drifts: drifts.map((d) => ({ account: d.account, field: d.field, driftNano: d.driftNano })) });
}

/** The drifts of a stored record (null or malformed: none; a malformed entry is left out). */
export function parseDriftRecord(raw: string | null): Drift[] {
  if (!raw) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return [];
  }
  const list = (parsed as { drifts?: unknown } | null)?.drifts;
  if (!Array.isArray(list)) return [];
  return list.flatMap((x: unknown) => {
    const d = x as Partial<Drift> | null;
    const ok =
      typeof d?.account === 'string' &&
      d.account !== '' &&
      (d.field === 'credited' || d.field === 'spent') &&
      Number.isSafeInteger(d.driftNano) &&
      d.driftNano !== 0;
    return ok ? [{ account: d.account as string, field: d.field as DriftField, driftNano: d.driftNano as number }] : [];
  });
}

/** One drift's identity: its account and field. Account names are Kubernetes object names: they never hold a '/'. */
export function driftId(d: Pick<Drift, 'account' | 'field'>): string {
  return `${d.account}/${d.field}`;
}
