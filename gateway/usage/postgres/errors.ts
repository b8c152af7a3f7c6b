// Which Postgres failures are the data's fault (poison: park the row) and which are the database's (retry later).
// SQLSTATE classes: 22 data exception, 23 integrity constraint violation, 54 program limit exceeded are caused
// by the row; everything else (connection loss, shutdown 57P01, deadlock 40P01, out of resources, a missing
// table) is retried, since parking good rows for an outage would lose them to a manual replay.
const DATA_CLASSES = new Set(['22', '23', '54']);

export function sqlState(err: unknown): string | null {
  if (typeof err !== 'object' || err === null || !('code' in err)) return null;
  const code = (err as { code: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

export function isDataError(err: unknown): boolean {
  const s = sqlState(err);
  return s !== null && DATA_CLASSES.has(s.slice(0, 2));
}

export function errorText(err: unknown): string {
  const s = sqlState(err);
  const m = err instanceof Error ? err.message : String(err);
  return s ? `${s}: ${m}` : m;
}
