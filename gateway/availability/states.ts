// Pure rules: a target's state from its recent probes and live traffic; a model's from its targets'. The page states
// the same rules (STATE_RULES), so what people read is what the code does.
import type { LiveCounts, ProbeResult, State } from './types.ts';

export interface Thresholds {
  /** A probe slower than this marks the target degraded_performance (ms). */
  slowMs: number;
  /** Live calls needed before live traffic alone can change a state. */
  minLiveCalls: number;
}

export const DEFAULT_THRESHOLDS: Thresholds = { slowMs: 5_000, minLiveCalls: 5 };

export const STATE_RULES = [
  'major_outage: the last two probes failed, or at least half of the live calls of the last 5 minutes failed upstream.',
  'partial_outage: the last probe failed, or at least 10% of the live calls failed upstream.',
  'degraded_performance: the last probe was slower than the threshold, or some live calls failed upstream.',
  'A model is in the best state of its targets: it is served while one target works.',
];

const RANK: Record<State, number> = { operational: 0, degraded_performance: 1, partial_outage: 2, major_outage: 3, under_maintenance: -1 };

/** The state of one target; `probes` newest last. Failures are upstream failures only (5xx, timeout, connect). */
export function targetState(probes: readonly ProbeResult[], live: LiveCounts, t: Thresholds = DEFAULT_THRESHOLDS): State {
  const last = probes.at(-1);
  const prev = probes.at(-2);
  const share = live.calls >= t.minLiveCalls ? live.failures / live.calls : 0;
  if ((last && !last.ok && prev && !prev.ok) || share >= 0.5) return 'major_outage';
  if ((last && !last.ok) || share >= 0.1) return 'partial_outage';
  if ((last && last.latencyMs > t.slowMs) || share > 0) return 'degraded_performance';
  return 'operational';
}

/** Best of the targets' states (under_maintenance when the model is inside a maintenance window). */
export function modelState(targets: readonly State[], maintenance = false): State {
  if (maintenance) return 'under_maintenance';
  let best: State = 'major_outage';
  for (const s of targets) if (s !== 'under_maintenance' && RANK[s] < RANK[best]) best = s;
  return best;
}

/** Worse of two states (for a day's bar). */
export function worse(a: State, b: State): State {
  return RANK[b] > RANK[a] ? b : a;
}

/** The uptime formula, as the status page states it (UPTIME_RULE): how much of a stretch of time counts as down. */
export const UPTIME_RULE =
  'Uptime = 1 − (time in major outage + half the time in partial outage) / time observed. Degraded performance ' +
  'counts as up; maintenance windows and times without a probe are left out.';

/** Down weight of a model state: major_outage 1, partial_outage 0.5, degraded or operational 0, maintenance null (not counted). */
export function downShare(model: State): number | null {
  switch (model) {
    case 'major_outage':
      return 1;
    case 'partial_outage':
      return 0.5;
    case 'degraded_performance':
    case 'operational':
      return 0;
    case 'under_maintenance':
      return null;
    default: {
      const never: never = model;
      return never;
    }
  }
}
