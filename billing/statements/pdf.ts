// A minimal PDF 1.4 writer for text only: A4 pages, Helvetica (a standard font every reader has, so nothing is
// embedded), lines of cells placed at x positions. Strings are escaped ( \ ( ) ) and limited to printable ASCII
// (anything else becomes '?'), so the output is valid whatever a model or key is called. No dependency.

export interface PdfCell {
  /** Points from the left edge. */
  x: number;
  text: string;
  bold?: boolean;
  /** Right-align at x (from Helvetica's glyph widths). */
  right?: boolean;
}

/** One line of the document: its cells, and its font size. An empty line is a gap. */
export interface PdfLine {
  cells: PdfCell[];
  size?: number;
}

const PAGE_W = 595;
const PAGE_H = 842;
const MARGIN = 50;

// Helvetica widths (1/1000 em) of printable ASCII 32..126, from the standard AFM files.
const HELVETICA = [
  278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584,
  556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278,
  469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260,
  334, 584,
];
const HELVETICA_BOLD = [
  278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584,
  611, 975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333,
  584, 556, 333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280,
  389, 584,
];

/** Printable ASCII only (the standard fonts' encoding beyond it differs between readers). */
export function pdfText(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, '?');
}

/** A PDF literal string body: backslash, parentheses escaped. */
export function escapePdf(s: string): string {
  return pdfText(s).replace(/[\\()]/g, (c) => `\\${c}`);
}

export function textWidth(s: string, size: number, bold = false): number {
  const w = bold ? HELVETICA_BOLD : HELVETICA;
  let total = 0;
  for (const ch of pdfText(s)) total += w[ch.charCodeAt(0) - 32] ?? 556;
  return (total * size) / 1000;
}

function pageStream(lines: readonly PdfLine[]): string {
  const ops: string[] = [];
  let y = PAGE_H - MARGIN;
  for (const line of lines) {
    const size = line.size ?? 9;
    y -= Math.round(size * 1.45 * 100) / 100;
    for (const c of line.cells) {
      const x = c.right ? c.x - textWidth(c.text, size, c.bold) : c.x;
      ops.push(`BT /${c.bold ? 'F2' : 'F1'} ${size} Tf ${x.toFixed(2)} ${y.toFixed(2)} Td (${escapePdf(c.text)}) Tj ET`);
    }
  }
  return ops.join('\n');
}

/** Splits lines into pages by height. */
function paginate(lines: readonly PdfLine[]): PdfLine[][] {
  const pages: PdfLine[][] = [[]];
  let used = 0;
  const room = PAGE_H - 2 * MARGIN;
  for (const l of lines) {
    const h = (l.size ?? 9) * 1.45;
    if (used + h > room) {
      pages.push([]);
      used = 0;
    }
    (pages.at(-1) as PdfLine[]).push(l);
    used += h;
  }
  return pages;
}

/** The whole file. Deterministic: the same lines give the same bytes (no dates, no ids). */
export function renderPdf(lines: readonly PdfLine[], title: string): Buffer {
  const pages = paginate(lines);
  const objects: string[] = [];
  // 1 catalog, 2 pages, 3 Helvetica, 4 Helvetica-Bold, 5 info, then per page: page, content.
  const pageIds = pages.map((_, i) => 6 + 2 * i);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  objects[4] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>';
  objects[5] = `<< /Title (${escapePdf(title)}) /Producer (svc-gateway) >>`;
  pages.forEach((p, i) => {
    const content = pageStream(p);
    objects[pageIds[i] as number] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${PAGE_W} ${PAGE_H}] ` +
      `/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents ${(pageIds[i] as number) + 1} 0 R >>`;
    objects[(pageIds[i] as number) + 1] = `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`;
  });
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(out, 'latin1');
    out += `${id} 0 obj\n${objects[id] as string}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R /Info 5 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

export const PDF_PAGE = { width: PAGE_W, height: PAGE_H, margin: MARGIN };
