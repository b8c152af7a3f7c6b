// Pure uptime maths over a model's history, kept as segments: a state held from `from` to `to` (ms). A probe round
// makes a segment [at, at + interval); equal neighbours merge, so 90 days fit in a few entries when all is well.
import { downShare, worse } from './states.ts';
import type { State } from './types.ts';

export interface Segment {
  from: number;
  to: number;
  state: State;
}

export const DAY_MS = 86_400_000;

/** Appends a segment, merging it into the last one when the state is the same and they touch or overlap. */
export function appendSegment(segments: Segment[], s: Segment): void {
  const last = segments.at(-1);
  if (last && last.state === s.state && s.from <= last.to) {
    last.to = Math.max(last.to, s.to);
    return;
  }
  if (last && s.from < last.to) last.to = s.from; // a newer observation wins over the tail of an older one
  segments.push({ ...s });
}

/**
 * Uptime share in [from, to): 1 − Σ(down weight × time) / time observed. Time without a segment and maintenance are
 * not observed. null when nothing was observed.
 */
export function uptime(segments: readonly Segment[], from: number, to: number): number | null {
  let observed = 0;
  let down = 0;
  for (const s of segments) {
    const a = Math.max(s.from, from);
    const b = Math.min(s.to, to);
    if (b <= a) continue;
    const w = downShare(s.state);
    if (w === null) continue;
    observed += b - a;
    down += w * (b - a);
  }
  return observed === 0 ? null : 1 - down / observed;
}

export interface DayBar {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  uptime: number | null;
  /** Worst state seen that day (null: no data). */
  worst: State | null;
}

/** `days` daily bars ending with today's (UTC), oldest first. Today's bar covers up to `now`. */
export function dailyBars(segments: readonly Segment[], now: number, days = 90): DayBar[] {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const bars: DayBar[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const from = today - i * DAY_MS;
    const to = Math.min(from + DAY_MS, now);
    let worst: State | null = null;
    for (const s of segments) if (s.from < to && s.to > from) worst = worst === null ? s.state : worse(worst, s.state);
    bars.push({ day: new Date(from).toISOString().slice(0, 10), uptime: uptime(segments, from, to), worst });
  }
  return bars;
}

export interface Windows {
  h24: number | null;
  d7: number | null;
  d30: number | null;
  d90: number | null;
}

export function uptimeWindows(segments: readonly Segment[], now: number): Windows {
  const w = (ms: number): number | null => uptime(segments, now - ms, now);
  return { h24: w(DAY_MS), d7: w(7 * DAY_MS), d30: w(30 * DAY_MS), d90: w(90 * DAY_MS) };
}

/** A share as the page prints it: two decimals, never rounded up to 100% when anything was down. */
export function percent(share: number | null): string {
  if (share === null) return 'no data';
  const p = Math.floor(share * 10_000) / 100;
  return `${p.toFixed(2)}%`;
}
