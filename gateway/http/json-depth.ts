// The nesting depth of JSON text, bounded before it is parsed: serializing a body nested 10,000 levels deep
// overflows the stack (JSON.stringify recurses), so such a body is refused as invalid input up front.

/** Deepest nesting of arrays and objects a request body may have (a tool's JSON schema needs a few dozen). */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/** True when the JSON text nests arrays and objects deeper than `limit` (brackets inside strings do not count). */
export function nestedDeeperThan(text: Buffer, limit: number): boolean {
  // Each level needs an opening bracket: a text no longer than the limit cannot exceed it.
  if (text.length <= limit) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === QUOTE) {
      i = stringEnd(text, i + 1);
      if (i === -1) return false;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/**
 * The index of the quote that closes the string whose text starts at `from`, or -1. A prompt is mostly inside
 * strings: the quotes are found by the native search, not byte by byte, and one is escaped when an odd number of
 * backslashes precedes it.
 */
function stringEnd(text: Buffer, from: number): number {
  for (let q = text.indexOf(QUOTE, from); q !== -1; q = text.indexOf(QUOTE, q + 1)) {
    let slashes = 0;
    while (q - 1 - slashes >= from && text[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q;
  }
  return -1;
}
