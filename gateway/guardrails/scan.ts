// One text scanned by a set of detectors: the hits found in its folded form, overlaps resolved (the earliest, then
// the longest, wins), mapped back to the caller's own text.
import { fold, originalRange } from './normalize.ts';
import type { Detect, Hit } from './types.ts';

export interface Found extends Hit {
  /** Which detector of the set found it (its index). */
  detector: number;
}

/** `times`, when the call is traced: each detector's time (ms) is added at its index. */
export function scanText(text: string, detectors: readonly Detect[], times?: number[]): Found[] {
  if (text.length === 0) return [];
  const f = fold(text);
  const raw: Found[] = [];
  detectors.forEach((d, i) => {
    const t0 = times ? performance.now() : 0;
    for (const h of d(f.text)) raw.push({ ...h, detector: i });
    if (times) times[i] = (times[i] ?? 0) + performance.now() - t0;
  });
  if (raw.length === 0) return raw;
  raw.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Found[] = [];
  let reach = -1;
  for (const h of raw) {
    if (h.start < reach) continue;
    const [start, end] = originalRange(f, h.start, h.end);
    out.push({ ...h, start, end });
    reach = h.end;
  }
  return out;
}
