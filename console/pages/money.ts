// Money on the console's pages, one rule everywhere (keys, usage, billing): an amount that rounds to at least a cent
// is shown to the cent, rounded as the monthly statement rounds (centsOf: half away from zero, from the exact sum); a
// non-zero amount below half a cent shows its first 4 significant digits, cut (never rounded up), so a small spend
// never reads as $0.00 nor as a cent. The exact nano-USD figure rides along in a title (the tooltip) and in the
// <data> element's value; CSV files keep the exact figure as their only one.
import { centsOf, exactUsd, money } from '../../billing/statements/statement.ts';
import { html, type Html } from '../html.ts';

const MINUS = '\u2212';
const SIGNIFICANT = 4;

function sign(nano: number): string {
  return nano < 0 ? MINUS : '';
}

/** "$1,234.57", "−$5.50", "$0.00", "$0.00001263" (below half a cent: 4 significant digits, cut). */
export function usdText(nano: number): string {
  if (!Number.isSafeInteger(nano)) throw new RangeError(`an amount must be an integer of nano-USD, got ${nano}`);
  const n = Math.abs(nano);
  if (n === 0 || centsOf(n) !== 0) return `${sign(nano)}$${money(n)}`;
  // Below half a cent (0 < n < 5,000,000 nano-USD): "0.00xxxxxxx"; keep up to SIGNIFICANT digits from the first non-zero one, drop trailing zeros.
  const decimals = exactUsd(n).slice(2);
  const first = decimals.search(/[1-9]/);
  const kept = decimals.slice(0, first + SIGNIFICANT).replace(/0+$/, '');
  return `${sign(nano)}$0.${kept}`;
}

/** The exact figure for a tooltip: "$10.999987364", "−$0.000000005". */
export function usdExactText(nano: number): string {
  return `${sign(nano)}$${exactUsd(Math.abs(nano))}`;
}

/** The amount as a page shows it: the rounded text, the exact USD in `value` (machine-readable) and in the tooltip. */
export function usd(nano: number): Html {
  return html`<data class="usd" value="${exactUsd(nano)}" title="Exactly ${usdExactText(nano)}">${usdText(nano)}</data>`;
}
