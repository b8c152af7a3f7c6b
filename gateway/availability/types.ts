// Model availability: the vocabulary of status pages (Atlassian Statuspage's component states and incident steps),
// what a probe records, and what every gateway reads about each target.

export const STATES = ['operational', 'degraded_performance', 'partial_outage', 'major_outage', 'under_maintenance'] as const;
export type State = (typeof STATES)[number];

export const INCIDENT_STEPS = ['investigating', 'identified', 'monitoring', 'resolved'] as const;
export type IncidentStep = (typeof INCIDENT_STEPS)[number];
export type Impact = 'none' | 'minor' | 'major' | 'critical';

/** One probe of one target: a minimal real call with the target's own credentials and timeouts, billed to no account. */
export interface ProbeResult {
  model: string;
  target: string;
  /** Start of the probe round (ms since the epoch); every target of a model in one round shares it. */
  at: number;
  ok: boolean;
  latencyMs: number;
  /** Upstream HTTP status, or null when none came (timeout, connect error). */
  status: number | null;
  message: string;
  /** What the probe cost the platform (nano-USD, from the upstream's usage and the route's prices). */
  costNano: number;
}

/** Live traffic of one target over the last minutes, from every gateway's outcomes. */
export interface LiveCounts {
  calls: number;
  /** Upstream failures only: 5xx, timeout, connect error (never a client's 4xx). */
  failures: number;
}

/** What every gateway reads about a target (Redis hash field or memory). */
export interface TargetStatus {
  model: string;
  target: string;
  state: State;
  /** Last probe time (ms), null before the first one. */
  lastProbe: number | null;
  latencyMs: number | null;
  message: string;
}

export interface IncidentUpdate {
  at: number;
  status: IncidentStep;
  message: string;
}

export interface Incident {
  id: string;
  title: string;
  /** 'probe' when opened by the probes; 'declared' when a person wrote an Incident. */
  source: 'probe' | 'declared';
  models: string[];
  impact: Impact;
  status: IncidentStep;
  createdAt: number;
  updatedAt: number;
  resolvedAt: number | null;
  updates: IncidentUpdate[];
  /** Scheduled maintenance window (declared incidents only): models are under_maintenance inside it. */
  scheduled: { from: number; to: number } | null;
  /** Declared incidents only: the models' state while it is open (probes do not overwrite it). */
  state?: State;
}

export function targetKey(model: string, target: string): string {
  return `${model}/${target}`;
}

/** The id of an McpServer among the models on the status page, the board and the history (as on the metrics). */
export function mcpSubject(server: string): string {
  return `mcp:${server}`;
}
