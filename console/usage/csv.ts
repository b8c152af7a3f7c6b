// Download CSV: exactly the table on the page (same rows, same order, same columns, the total row last).
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import { GROUP_LABELS, type Figures, type GroupBy, type UsageReport } from './report.ts';

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
  // Each kind's own units beside tokens: a rerank's output count (its Tokens out is 0), a transcription's seconds of
  // audio, a speech's input characters, the images image calls returned; then the batch lines and what they cost
  // (part of Spend).
  'Search units',
  'Audio seconds',
  'Characters',
  'Images',
  'Batch lines',
  'Batch spend (USD)',
] as const;

/** The columns of amounts (right-aligned on the page). */
export const MONEY_COLUMNS: ReadonlySet<string> = new Set(['Spend (USD)', 'Saved by cache (USD)', 'Batch spend (USD)']);

/** A row's figures in COLUMNS order, each a count or an amount (nano-USD): the page and the CSV write the same list. */
export function figureCells(f: Figures): Array<{ money: boolean; value: number }> {
  const n = (value: number): { money: boolean; value: number } => ({ money: false, value });
  const m = (value: number): { money: boolean; value: number } => ({ money: true, value });
  return [
    n(f.requests),
    n(f.errors),
    n(f.fallbacks),
    n(f.inputTokens),
    n(f.outputTokens),
    m(f.costNano),
    n(f.cacheHits),
    m(f.cacheSavedNano),
    n(f.searchUnits),
    n(f.audioSeconds),
    n(f.characters),
    n(f.images),
    n(f.batchRequests),
    m(f.batchCostNano),
  ];
}

const csvRow = (label: string, f: Figures): string => [label, ...figureCells(f).map((c) => (c.money ? usd(c.value) : c.value))].map(cell).join(',');

export function toCsv(report: UsageReport, groupBy: GroupBy): string {
  const lines = [[GROUP_LABELS[groupBy], ...COLUMNS].map(cell).join(',')];
  for (const r of report.rows) lines.push(csvRow(r.group, r));
  lines.push(csvRow('Total', report.totals));
  return `${lines.join('\r\n')}\r\n`;
}
