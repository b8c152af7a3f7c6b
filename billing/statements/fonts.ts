// The statement's fonts, shipped as npm packages (so the image needs no font from the OS): Noto Sans (Latin, Greek,
// Cyrillic, Vietnamese, Devanagari), Noto Sans Hebrew and Noto Sans JP (kana and kanji), all SIL Open Font License
// 1.1, from @fontsource. Each package splits its font into files by Unicode range (its <weight>.css says which file
// holds which code points); a piece of text is cut into runs, each with the first file that covers its characters, and
// the PDF embeds only the glyphs used from each (pdfkit subsets). A character no file covers is drawn as '?'.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Font packages, in the order a character is looked up. */
const PACKAGES = ['@fontsource/noto-sans', '@fontsource/noto-sans-hebrew', '@fontsource/noto-sans-jp'];

export type Weight = 400 | 700;

export interface FontFile {
  /** A name to register with pdfkit, unique per file. */
  name: string;
  path: string;
  ranges: Array<[number, number]>;
}

const require = createRequire(import.meta.url);
const catalogs = new Map<Weight, FontFile[]>();

function parseRanges(s: string): Array<[number, number]> {
  return s.split(',').map((part) => {
    const [a, b] = part.trim().replace(/^U\+/i, '').split('-');
    const lo = parseInt(a as string, 16);
    return [lo, b === undefined ? lo : parseInt(b, 16)];
  });
}

/** Every font file of `weight`, from the packages' CSS (WOFF: fontkit subsets WOFF 1 reliably, WOFF 2 not always). */
export function fontCatalog(weight: Weight): FontFile[] {
  const known = catalogs.get(weight);
  if (known) return known;
  const out: FontFile[] = [];
  for (const pkg of PACKAGES) {
    const dir = dirname(require.resolve(`${pkg}/package.json`));
    const css = readFileSync(join(dir, `${weight}.css`), 'utf8');
    for (const face of css.split('@font-face').slice(1)) {
      const file = /url\(\.\/files\/([^)]+)\.woff2\)/.exec(face)?.[1];
      const range = /unicode-range:\s*([^;]+);/.exec(face)?.[1];
      if (file && range) out.push({ name: file, path: join(dir, 'files', `${file}.woff`), ranges: parseRanges(range) });
    }
  }
  catalogs.set(weight, out);
  return out;
}

function covers(f: FontFile, cp: number): boolean {
  return f.ranges.some(([lo, hi]) => cp >= lo && cp <= hi);
}

const RTL = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/u;
const NEUTRAL = /[\s\p{P}\p{S}]/u;

export interface Run {
  text: string;
  font: FontFile;
}

/** Runs of one font each, in logical order. */
function fontRuns(text: string, catalog: readonly FontFile[]): Run[] {
  const runs: Run[] = [];
  const fallback = catalog.find((f) => covers(f, 0x3f)) as FontFile;
  for (let ch of text) {
    const cp = ch.codePointAt(0) as number;
    const last = runs.at(-1);
    // Spaces and punctuation stay in the run they are in when its font has them (fewer, longer runs).
    if (last && NEUTRAL.test(ch) && covers(last.font, cp)) {
      last.text += ch;
      continue;
    }
    let font = catalog.find((f) => covers(f, cp));
    if (!font) [font, ch] = [fallback, '?'];
    if (last && last.font === font) last.text += ch;
    else runs.push({ text: ch, font });
  }
  return runs;
}

/**
 * Runs in the order they are drawn, left to right, for a left-to-right line: a right-to-left stretch (Hebrew or Arabic
 * letters, and the spaces and punctuation between them) has its runs drawn in reverse order; within a run, pdfkit's
 * layout (fontkit) already puts right-to-left letters in visual order.
 */
export function visualRuns(text: string, weight: Weight): Run[] {
  const catalog = fontCatalog(weight);
  const out: Run[] = [];
  // Stretches: right-to-left ones start and end with a right-to-left letter.
  const re = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc](?:[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\s\p{P}]*[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc])?/gu;
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > at) out.push(...fontRuns(text.slice(at, m.index), catalog));
    out.push(...fontRuns(m[0], catalog).reverse());
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(...fontRuns(text.slice(at), catalog));
  return out;
}

export const isRtl = (s: string): boolean => RTL.test(s);
