// The statement as a PDF: header, bill-to block, the balance summary, credits, usage by model and by key, the
// rounding rule. Laid out as lines of cells (billing/statements/pdf.ts); amounts right-aligned in their column; A4 or Letter.
import { MARGIN, PAPER, renderPdf, type Paper, type PdfLine } from './pdf.ts';
import {
  creditLabel,
  headerLines,
  money,
  monthRange,
  quantityText,
  ROUNDING_RULE,
  SLA_RULE,
  type Line,
  type QuantityLine,
  type Statement,
} from './statement.ts';

const L = MARGIN;

function text(t: string, x = L, bold = false, size?: number): PdfLine {
  return { cells: [{ x, text: t, bold }], size };
}

const GAP: PdfLine = { cells: [] };

/** Splits a long sentence into lines of at most `n` characters at spaces. */
function wrap(s: string, n: number): string[] {
  const out: string[] = [];
  let cur = '';
  for (const w of s.split(' ')) {
    if (cur && cur.length + 1 + w.length > n) {
      out.push(cur);
      cur = w;
    } else cur = cur ? `${cur} ${w}` : w;
  }
  if (cur) out.push(cur);
  return out;
}

function table(title: string, first: string, lines: readonly Line[], R: number): PdfLine[] {
  const out: PdfLine[] = [
    GAP,
    text(title, L, true, 11),
    {
      cells: [
        { x: L, text: first, bold: true },
        { x: 330, text: 'Requests', bold: true, right: true },
        { x: 400, text: 'Tokens in', bold: true, right: true },
        { x: 470, text: 'Tokens out', bold: true, right: true },
        { x: R, text: 'Amount (USD)', bold: true, right: true },
      ],
    },
  ];
  if (lines.length === 0) out.push(text('No usage this month.'));
  for (const l of lines) {
    out.push({
      cells: [
        { x: L, text: l.label.length > 48 ? `${l.label.slice(0, 47)}~` : l.label },
        { x: 330, text: String(l.requests), right: true },
        { x: 400, text: String(l.inputTokens), right: true },
        { x: 470, text: String(l.outputTokens), right: true },
        { x: R, text: money(l.costNano), right: true },
      ],
    });
  }
  const t = lines.reduce((a, l) => ({ requests: a.requests + l.requests, costNano: a.costNano + l.costNano }), { requests: 0, costNano: 0 });
  out.push({
    cells: [
      { x: L, text: 'Total', bold: true },
      { x: 330, text: String(t.requests), bold: true, right: true },
      { x: R, text: money(t.costNano), bold: true, right: true },
    ],
  });
  return out;
}

/** Usage by kind of call: each kind in its units (a rerank's output is search units, not tokens). */
function kindTable(lines: readonly Line[], R: number): PdfLine[] {
  const cols = (label: string, l: Pick<Line, 'requests' | 'inputTokens' | 'outputTokens' | 'searchUnits'> | null, bold: boolean, amount: string): PdfLine => ({
    cells: [
      { x: L, text: label, bold },
      { x: 280, text: l ? String(l.requests) : 'Requests', bold, right: true },
      { x: 340, text: l ? String(l.inputTokens) : 'Tokens in', bold, right: true },
      { x: 400, text: l ? String(l.outputTokens) : 'Tokens out', bold, right: true },
      { x: 465, text: l ? String(l.searchUnits) : 'Search units', bold, right: true },
      { x: R, text: amount, bold, right: true },
    ],
  });
  const out: PdfLine[] = [GAP, text('Usage by kind of call', L, true, 11), cols('Kind', null, true, 'Amount (USD)')];
  if (lines.length === 0) out.push(text('No usage this month.'));
  for (const l of lines) out.push(cols(l.label, l, false, money(l.costNano)));
  return out;
}

/** Each kind in its own unit (minutes of audio, characters, search units...), then the batch lines at the batch price. */
function quantityTable(lines: readonly QuantityLine[], R: number): PdfLine[] {
  if (lines.length === 0) return [];
  const out: PdfLine[] = [
    GAP,
    text('Quantities by kind of call', L, true, 11),
    {
      cells: [
        { x: L, text: 'Kind and quantity', bold: true },
        { x: R, text: 'Amount (USD)', bold: true, right: true },
      ],
    },
  ];
  for (const q of lines) {
    const t = quantityText(q);
    out.push({
      cells: [
        { x: L, text: t.length > 80 ? `${t.slice(0, 79)}~` : t },
        { x: R, text: money(q.costNano), right: true },
      ],
    });
  }
  return out;
}

function amountLine(label: string, nano: number, R: number, bold = false): PdfLine {
  return {
    cells: [
      { x: L, text: label, bold },
      { x: R, text: money(nano), bold, right: true },
    ],
  };
}

/** 'a4' or 'letter' (any case), as the CLI's --paper and the console's ?paper= take it; null for anything else. */
export function paperOf(s: string): Paper | null {
  const p = s.toUpperCase();
  return p === 'A4' || p === 'LETTER' ? p : null;
}

/** The statement on A4 (default) or US Letter. */
export function statementPdf(s: Statement, o: { paper?: Paper } = {}): Promise<Buffer> {
  const paper = o.paper ?? 'A4';
  const R = PAPER[paper].width - MARGIN;
  const lines: PdfLine[] = [text(`Statement ${s.month}`, L, true, 16), GAP];
  if (s.billing?.invoiceHeader) {
    lines.push(text('Bill to', L, true));
    for (const l of s.billing.invoiceHeader.split('\n')) lines.push(text(l));
    lines.push(GAP);
  }
  for (const [k, v] of headerLines(s))
    lines.push({
      cells: [
        { x: L, text: `${k}:`, bold: true },
        { x: 150, text: v },
      ],
    });
  lines.push(GAP, text('Summary (USD)', L, true, 11));
  lines.push(
    amountLine('Opening balance', s.openingNano, R),
    amountLine('Credits, payments and refunds', s.creditsNano, R),
    amountLine('Usage', s.spendNano, R),
    amountLine('  of which platform fee (4%)', s.feeNano, R),
    amountLine('Closing balance (opening + credits - usage)', s.closingNano, R, true),
  );
  if (s.cacheHits > 0) lines.push(amountLine(`Response cache: ${s.cacheHits} ${s.cacheHits === 1 ? 'hit' : 'hits'}, saved (not charged)`, s.cacheSavedNano, R));
  lines.push(GAP, text('Credits, payments and refunds', L, true, 11));
  if (s.credits.length === 0) lines.push(text('None this month.'));
  for (const c of s.credits) {
    lines.push({
      cells: [
        { x: L, text: c.at.slice(0, 10) },
        { x: 120, text: creditLabel(c.kind) },
        { x: 230, text: c.reference.slice(0, 48) },
        { x: R, text: money(c.amountNano), right: true },
      ],
    });
  }
  lines.push(
    ...kindTable(s.byKind, R),
    ...quantityTable(s.quantities, R),
    ...table('Usage by model', 'Model', s.byModel, R),
    ...table('Usage by key', 'Key', s.byKey, R),
  );
  lines.push(GAP, ...wrap(`Rounding: ${ROUNDING_RULE}`, 110).map((l) => text(l, L, false, 8)));
  if (s.billing?.sla) lines.push(GAP, ...wrap(SLA_RULE, 110).map((l) => text(l, L, false, 8)));
  // Dated the end of its period: the same statement is the same file, wherever and whenever it is made.
  const end = monthRange(s.month)?.end ?? 0;
  return renderPdf(lines, {
    title: `Statement ${s.account} ${s.month}`,
    subject: `svc-gateway monthly statement of account ${s.account}`,
    createdAt: new Date(end),
    paper,
  });
}
