// The statement PDF through pdfkit: lines of cells placed at x positions, on A4 or US Letter, in Noto Sans embedded
// and subsetted from npm font packages (fonts.ts: Latin, Greek, Cyrillic, Hebrew, Japanese and more; nothing from the
// OS), PDF/A-2b metadata (title, author, subject, an XMP stream) and a fixed creation date, so the same statement is
// the same bytes. Right-to-left names come out in their letters (fonts.ts orders the runs).
import PDFDocument from 'pdfkit';
import { visualRuns, type Weight } from './fonts.ts';

export interface PdfCell {
  /** Points from the left edge. */
  x: number;
  text: string;
  bold?: boolean;
  /** Right-align at x. */
  right?: boolean;
}

/** One line of the document: its cells, and its font size. An empty line is a gap. */
export interface PdfLine {
  cells: PdfCell[];
  size?: number;
}

export type Paper = 'A4' | 'LETTER';

/** Page sizes in points, and the margin kept on every side. */
export const PAPER: Readonly<Record<Paper, { width: number; height: number }>> = {
  A4: { width: 595.28, height: 841.89 },
  LETTER: { width: 612, height: 792 },
};
export const MARGIN = 50;

export interface PdfMeta {
  title: string;
  subject?: string;
  /** The document's date (a statement: the end of its period), so that the output is deterministic. */
  createdAt: Date;
  paper?: Paper;
}

const lineHeight = (l: PdfLine): number => (l.size ?? 9) * 1.45;

/** Splits lines into pages by height. */
function paginate(lines: readonly PdfLine[], pageHeight: number): PdfLine[][] {
  const pages: PdfLine[][] = [[]];
  let used = 0;
  const room = pageHeight - 2 * MARGIN;
  for (const l of lines) {
    if (used + lineHeight(l) > room) {
      pages.push([]);
      used = 0;
    }
    (pages.at(-1) as PdfLine[]).push(l);
    used += lineHeight(l);
  }
  return pages;
}

class Writer {
  private readonly doc: PDFKit.PDFDocument;
  private readonly registered = new Set<string>();

  constructor(doc: PDFKit.PDFDocument) {
    this.doc = doc;
  }

  private runs(text: string, size: number, weight: Weight): Array<{ text: string; font: string; width: number }> {
    return visualRuns(text, weight).map((r) => {
      if (!this.registered.has(r.font.name)) {
        this.doc.registerFont(r.font.name, r.font.path);
        this.registered.add(r.font.name);
      }
      return { text: r.text, font: r.font.name, width: this.doc.font(r.font.name).fontSize(size).widthOfString(r.text) };
    });
  }

  cell(c: PdfCell, y: number, size: number): void {
    const runs = this.runs(c.text, size, c.bold ? 700 : 400);
    let x = c.right ? c.x - runs.reduce((a, r) => a + r.width, 0) : c.x;
    for (const r of runs) {
      this.doc.font(r.font).fontSize(size).text(r.text, x, y, { lineBreak: false });
      x += r.width;
    }
  }
}

/** The whole file. Deterministic: the same lines and metadata give the same bytes. */
export function renderPdf(lines: readonly PdfLine[], meta: PdfMeta): Promise<Buffer> {
  const paper = PAPER[meta.paper ?? 'A4'];
  const doc = new PDFDocument({
    size: [paper.width, paper.height],
    margin: 0,
    autoFirstPage: false,
    pdfVersion: '1.7',
    subset: 'PDF/A-2b',
    lang: 'en',
    displayTitle: true,
    info: {
      Title: meta.title,
      Subject: meta.subject ?? meta.title,
      Author: 'svc-gateway',
      Creator: 'svc-gateway',
      Producer: 'svc-gateway (pdfkit)',
      CreationDate: meta.createdAt,
      ModDate: meta.createdAt,
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const w = new Writer(doc);
  for (const page of paginate(lines, paper.height)) {
    doc.addPage({ size: [paper.width, paper.height], margin: 0 });
    let y = MARGIN;
    for (const line of page) {
      for (const c of line.cells) w.cell(c, y, line.size ?? 9);
      y += lineHeight(line);
    }
  }
  doc.end();
  return done;
}
