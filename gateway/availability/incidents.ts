// Pure incident automaton of the probes, one model at a time: opened when the model left `operational` for two probe
// rounds in a row, resolved after two good rounds, every change an update (investigating -> identified ->
// monitoring -> resolved). A declared incident (a person's) that is open for the model stops the automaton: probes
// do not write over what it says.
import type { Impact, Incident, State } from './types.ts';

export interface ModelTrack {
  /** Rounds in a row not operational (maintenance excluded), and operational. */
  bad: number;
  good: number;
  /** The open incident the probes opened for this model, if any. */
  open: Incident | null;
}

export function newTrack(): ModelTrack {
  return { bad: 0, good: 0, open: null };
}

export type Change = { kind: 'open'; incident: Incident } | { kind: 'update'; incident: Incident };

const IMPACT: Record<State, Impact> = {
  operational: 'none',
  under_maintenance: 'none',
  degraded_performance: 'minor',
  partial_outage: 'major',
  major_outage: 'critical',
};

const WORDS: Record<State, string> = {
  operational: 'operational',
  degraded_performance: 'degraded performance',
  partial_outage: 'a partial outage',
  major_outage: 'a major outage',
  under_maintenance: 'under maintenance',
};

export function describeState(s: State): string {
  return WORDS[s];
}

/**
 * One probe round of a model: its new state and what the probes said (`detail`, e.g. the failing target's error).
 * Mutates `track`; returns the change to store, if any.
 */
export interface RoundOutcome {
  model: string;
  state: State;
  /** What the probes said (the failing targets' messages). */
  detail: string;
  at: number;
  /** A person's incident is open for the model. */
  declaredOpen?: boolean;
}

export function step(track: ModelTrack, r: RoundOutcome, newId: () => string): Change | null {
  const { model, state, detail, at } = r;
  const declaredOpen = r.declaredOpen ?? false;
  if (state === 'under_maintenance' || declaredOpen) {
    track.bad = 0;
    track.good = 0;
    return null;
  }
  const open = track.open;
  if (state === 'operational') {
    track.bad = 0;
    track.good++;
    if (!open) return null;
    if (track.good === 1) return update(open, 'monitoring', `${model} answers its probes again; monitoring.`, at);
    track.open = null;
    const change = update(open, 'resolved', `${model} has been operational for two probe rounds; resolved.`, at);
    open.resolvedAt = at;
    return change;
  }
  track.good = 0;
  track.bad++;
  if (!open) {
    if (track.bad < 2) return null;
    const incident: Incident = {
      id: newId(),
      title: `${model}: ${describeState(state)}`,
      source: 'probe',
      models: [model],
      impact: IMPACT[state],
      status: 'investigating',
      createdAt: at,
      updatedAt: at,
      resolvedAt: null,
      scheduled: null,
      updates: [{ at, status: 'investigating', message: `${model} is in ${describeState(state)} for two probe rounds in a row. ${detail}`.trim() }],
    };
    track.open = incident;
    return { kind: 'open', incident };
  }
  const worseImpact = rank(IMPACT[state]) > rank(open.impact);
  if (open.status === 'investigating' || open.status === 'monitoring' || worseImpact) {
    if (worseImpact) open.impact = IMPACT[state];
    return update(open, 'identified', `${model} is in ${describeState(state)}. ${detail}`.trim(), at);
  }
  return null;
}

function rank(i: Impact): number {
  return ['none', 'minor', 'major', 'critical'].indexOf(i);
}

function update(incident: Incident, status: Incident['status'], message: string, at: number): Change {
  incident.status = status;
  incident.updatedAt = at;
  incident.updates.push({ at, status, message });
  return { kind: 'update', incident };
}
