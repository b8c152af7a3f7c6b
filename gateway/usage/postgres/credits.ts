// Credits into the ledger, from the compiled config: the trial credit and each credit id once per account, as the
// state store applies them (a later change to an applied credit's amount changes neither).
import type pg from 'pg';
import type { Snapshot } from '../../contract/snapshot.ts';

const INSERT = `
INSERT INTO ledger_credits (account, kind, credit_id, amount_nano)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
ON CONFLICT (account, kind, credit_id) DO NOTHING`;

/** Records the snapshot's credits not recorded yet; returns how many were new. */
export async function recordCredits(pool: pg.Pool, snapshot: Pick<Snapshot, 'accounts'>): Promise<number> {
  const rows: Array<[string, 'trial' | 'credit', string, number]> = [];
  for (const a of Object.values(snapshot.accounts).sort((x, y) => x.name.localeCompare(y.name))) {
    rows.push([a.name, 'trial', '', a.trialCreditNano]);
    for (const c of a.credits) rows.push([a.name, 'credit', c.id, c.amountNano]);
  }
  if (rows.length === 0) return 0;
  const r = await pool.query(INSERT, [rows.map((x) => x[0]), rows.map((x) => x[1]), rows.map((x) => x[2]), rows.map((x) => x[3])]);
  return r.rowCount ?? 0;
}
