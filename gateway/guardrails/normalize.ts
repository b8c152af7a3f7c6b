// The text a detector reads: the caller's text with the tricks that hide a match from a plain pattern undone.
// Compatibility forms are folded (NFKC: full-width digits and letters, the small and full-width commercial at, the
// mathematical alphanumerics), invisible characters are dropped (zero-width spaces and joiners, the word joiner,
// bidi controls, the byte order mark, the soft hyphen), and the full stops NFKC keeps are mapped to `.`. Every unit of
// the folded text remembers the source character it came from, so a match is masked in the caller's own text.

const INVISIBLE = /^[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]$/;
const DOTS: Record<string, string> = { '\u3002': '.', '\uFF61': '.', '\uFE52': '.' };
const NON_ASCII = /[\u0080-\uFFFF]/;

export interface Folded {
  /** The folded text detectors read. */
  readonly text: string;
  /** Per unit of `text`: where its source character starts and ends in the original; null when nothing was folded. */
  readonly starts: Int32Array | null;
  readonly ends: Int32Array | null;
}

/** ASCII text is read as it is (the common case, and the fast one). */
export function fold(original: string): Folded {
  if (!NON_ASCII.test(original)) return { text: original, starts: null, ends: null };
  let out = '';
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = 0; i < original.length;) {
    const ch = String.fromCodePoint(original.codePointAt(i)!);
    const next = i + ch.length;
    if (!INVISIBLE.test(ch)) {
      const mapped = ch.charCodeAt(0) < 0x80 ? ch : (DOTS[ch] ?? ch.normalize('NFKC'));
      for (let k = 0; k < mapped.length; k++) {
        starts.push(i);
        ends.push(next);
      }
      out += mapped;
    }
    i = next;
  }
  return { text: out, starts: Int32Array.from(starts), ends: Int32Array.from(ends) };
}

/** The original range of folded range [start, end) (end > start). */
export function originalRange(f: Folded, start: number, end: number): [number, number] {
  if (!f.starts || !f.ends) return [start, end];
  return [f.starts[start]!, f.ends[end - 1]!];
}
