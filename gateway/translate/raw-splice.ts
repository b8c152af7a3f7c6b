// Edits of a large request body's top-level members on its raw bytes: a pass-through sets the model and an output
// cap, and copies every other member (a long prompt) byte for byte instead of serializing it again, which for a
// body of a megabyte was the largest cost of passing it on. The result is the same JSON value as serializing the
// parsed body with the edits; any layout the scanner does not follow (not one object, a key given twice) answers
// null and the caller serializes as before.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Bodies at least this large are spliced; smaller ones are serialized (cheap, and byte for byte as before). From about
 * here each copy of a body is a fresh large allocation (V8's large objects, malloc's mmap threshold), its pages
 * faulted in one by one: one copy fewer is worth more than the scan costs.
 */
export const SPLICE_MIN_BYTES = 128 * 1024;

interface Member {
  key: string;
  /** Where the member starts (its key's quote) and where its value ends (exclusive). */
  start: number;
  end: number;
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(t: Buffer, i: number): number {
  while (isSpace(t[i])) i++;
  return i;
}

/** The index just past the string whose opening quote is at `at`, or -1. */
function afterString(t: Buffer, at: number): number {
  for (let q = t.indexOf(QUOTE, at + 1); q !== -1; q = t.indexOf(QUOTE, q + 1)) {
    let slashes = 0;
    while (q - 1 - slashes > at && t[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
  }
  return -1;
}

/** The index just past the value that starts at `at`, or -1. */
function afterValue(t: Buffer, at: number): number {
  const c = t[at];
  if (c === QUOTE) return afterString(t, at);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let i = at; i < t.length; i++) {
      const d = t[i];
      if (d === QUOTE) {
        i = afterString(t, i) - 1;
        if (i < 0) return -1;
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return i + 1;
    }
    return -1;
  }
  let i = at;
  while (i < t.length && t[i] !== 0x2c && t[i] !== 0x7d && !isSpace(t[i])) i++;
  return i > at ? i : -1;
}

/** The top-level members of a JSON object's text, in order; null if it is not one object or a key repeats. */
export function topLevelMembers(t: Buffer): Member[] | null {
  let i = skipSpace(t, 0);
  if (t[i] !== 0x7b) return null;
  i = skipSpace(t, i + 1);
  const out: Member[] = [];
  const seen = new Set<string>();
  if (t[i] === 0x7d) return skipSpace(t, i + 1) === t.length ? out : null;
  for (;;) {
    if (t[i] !== QUOTE) return null;
    const start = i;
    const keyEnd = afterString(t, i);
    if (keyEnd < 0) return null;
    const key = JSON.parse(t.toString('utf8', i, keyEnd)) as string;
    if (seen.has(key)) return null;
    seen.add(key);
    i = skipSpace(t, keyEnd);
    if (t[i] !== 0x3a) return null;
    i = skipSpace(t, i + 1);
    const end = afterValue(t, i);
    if (end < 0) return null;
    out.push({ key, start, end });
    i = skipSpace(t, end);
    if (t[i] === 0x2c) {
      i = skipSpace(t, i + 1);
      continue;
    }
    if (t[i] === 0x7d && skipSpace(t, i + 1) === t.length) return out;
    return null;
  }
}

/**
 * `raw` (a JSON object's text) with members replaced, added or removed: `edits` maps a key to its new value
 * (serialized), or to undefined to remove it. Kept members stay in place, new ones come last, as JSON.stringify of
 * `{ ...parsed, ...edits }` orders them. Null when the text is not one object the scanner follows.
 */
export function spliceTopLevel(raw: Buffer, edits: ReadonlyMap<string, unknown>): Buffer | null {
  const members = topLevelMembers(raw);
  if (!members) return null;
  const parts: Buffer[] = [];
  let first = true;
  const add = (b: Buffer): void => {
    parts.push(first ? Buffer.from('{') : Buffer.from(','), b);
    first = false;
  };
  const member = (key: string, value: unknown): Buffer | null => {
    const v = JSON.stringify(value);
    return v === undefined ? null : Buffer.from(`${JSON.stringify(key)}:${v}`);
  };
  const present = new Set<string>();
  for (const m of members) {
    present.add(m.key);
    if (!edits.has(m.key)) {
      add(raw.subarray(m.start, m.end));
      continue;
    }
    const b = member(m.key, edits.get(m.key));
    if (b) add(b);
  }
  for (const [key, value] of edits) {
    if (present.has(key)) continue;
    const b = member(key, value);
    if (b) add(b);
  }
  parts.push(Buffer.from(first ? '{}' : '}'));
  return Buffer.concat(parts);
}
