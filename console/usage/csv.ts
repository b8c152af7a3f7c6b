// Download CSV: exactly the table on the page (same rows, same order, same columns, the total row last).
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import { GROUP_LABELS, type GroupBy, type UsageReport } from './report.ts';

function cell(v: string | number): string {
  const s = String(v);
  // Quoted when needed; a leading = + - @ is defused so a spreadsheet never runs a formula from a key or task name.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** Exact: nano-USD written with 9 decimals by integer arithmetic, so rows add up to the total to the last digit. */
export function usd(nano: number): string {
  const sign = nano < 0 ? '-' : '';
  const n = Math.abs(nano);
  return `${sign}${Math.floor(n / NANO_PER_USD)}.${String(n % NANO_PER_USD).padStart(9, '0')}`;
}

export const COLUMNS = [
  'Requests',
  'Errors',
  'Fallbacks',
  'Tokens in',
  'Tokens out',
  'Spend (USD)',
  'Cache hits',
  'Saved by cache (USD)',
  // A rerank's output count (its Tokens out is 0).
  'Search units',
] as const;

/** The columns of amounts (right-aligned on the page). */
export const MONEY_COLUMNS: ReadonlySet<string> = new Set(['Spend (USD)', 'Saved by cache (USD)']);

export function toCsv(report: UsageReport, groupBy: GroupBy): string {
  const lines = [[GROUP_LABELS[groupBy], ...COLUMNS].map(cell).join(',')];
  for (const r of report.rows) {
    lines.push(
      [r.group, r.requests, r.errors, r.fallbacks, r.inputTokens, r.outputTokens, usd(r.costNano), r.cacheHits, usd(r.cacheSavedNano), r.searchUnits]
        .map(cell)
        .join(','),
    );
  }
  const t = report.totals;
  lines.push(
    ['Total', t.requests, t.errors, t.fallbacks, t.inputTokens, t.outputTokens, usd(t.costNano), t.cacheHits, usd(t.cacheSavedNano), t.searchUnits]
      .map(cell)
      .join(','),
  );
  return `${lines.join('\r\n')}\r\n`;
}
