// The status page's JSON in the shapes Atlassian Statuspage publishes (public API v2: summary.json, status.json,
// components.json, incidents.json, incidents/unresolved.json, scheduled-maintenances.json), so existing widgets and
// monitors read it. One component per model; incidents with their incident_updates.
import type { Incident, IncidentUpdate, State } from '../../gateway/availability/types.ts';
import type { ModelView, StatusView } from '../../gateway/availability/view.ts';

export interface PageInfo {
  id: string;
  name: string;
  url: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function page(p: PageInfo, v: StatusView): object {
  return { id: p.id, name: p.name, url: p.url, time_zone: 'Etc/UTC', updated_at: iso(v.asOf) };
}

const INDICATOR: Record<State, { indicator: 'none' | 'minor' | 'major' | 'critical'; description: string; rank: number }> = {
  operational: { indicator: 'none', description: 'All Systems Operational', rank: 0 },
  under_maintenance: { indicator: 'none', description: 'Service Under Maintenance', rank: 1 },
  degraded_performance: { indicator: 'minor', description: 'Minor Service Outage', rank: 2 },
  partial_outage: { indicator: 'major', description: 'Partial System Outage', rank: 3 },
  major_outage: { indicator: 'critical', description: 'Major Service Outage', rank: 4 },
};

/** The page's overall state: the worst model state. */
export function overall(v: StatusView): { indicator: 'none' | 'minor' | 'major' | 'critical'; description: string } {
  let worst: State = 'operational';
  for (const m of v.models) if (INDICATOR[m.state].rank > INDICATOR[worst].rank) worst = m.state;
  const { indicator, description } = INDICATOR[worst];
  return { indicator, description };
}

export function componentId(model: string): string {
  return `model-${model}`;
}

function component(p: PageInfo, m: ModelView, position: number, at: number): object {
  return {
    id: componentId(m.id),
    name: m.id,
    status: m.state,
    created_at: iso(at),
    updated_at: iso(m.lastProbe ?? at),
    position,
    description: m.type === 'mcp' ? 'MCP server' : `${m.type} model, ${m.targets.length} target${m.targets.length === 1 ? '' : 's'}`,
    showcase: true,
    start_date: null,
    group_id: null,
    page_id: p.id,
    group: false,
    only_show_if_degraded: false,
  };
}

export function components(p: PageInfo, v: StatusView): object[] {
  return v.models.map((m, i) => component(p, m, i + 1, v.asOf));
}

function update(p: PageInfo, i: Incident, u: IncidentUpdate, n: number, v: StatusView): object {
  return {
    id: `${i.id}-${n}`,
    status: u.status,
    body: u.message,
    incident_id: i.id,
    created_at: iso(u.at),
    updated_at: iso(u.at),
    display_at: iso(u.at),
    affected_components: i.models.map((m) => ({
      code: componentId(m),
      name: m,
      old_status: 'operational',
      new_status: v.models.find((x) => x.id === m)?.state ?? 'operational',
    })),
    deliver_notifications: false,
    custom_tweet: null,
    tweet_id: null,
  };
}

function incident(p: PageInfo, i: Incident, v: StatusView): Record<string, unknown> {
  const monitoring = i.updates.find((u) => u.status === 'monitoring');
  return {
    id: i.id,
    name: i.title,
    status: i.status,
    created_at: iso(i.createdAt),
    updated_at: iso(i.updatedAt),
    monitoring_at: monitoring ? iso(monitoring.at) : null,
    resolved_at: i.resolvedAt === null ? null : iso(i.resolvedAt),
    impact: i.impact,
    shortlink: `${p.url}#incident-${i.id}`,
    started_at: iso(i.createdAt),
    page_id: p.id,
    incident_updates: [...i.updates].reverse().map((u, n) => update(p, i, u, i.updates.length - n, v)),
    components: v.models.filter((m) => i.models.includes(m.id)).map((m) => component(p, m, v.models.indexOf(m) + 1, v.asOf)),
  };
}

function maintenance(p: PageInfo, i: Incident, v: StatusView): object {
  const s = i.scheduled as { from: number; to: number };
  const status = i.status === 'resolved' ? 'completed' : v.asOf < s.from ? 'scheduled' : v.asOf < s.to ? 'in_progress' : 'completed';
  return { ...incident(p, i, v), status, scheduled_for: iso(s.from), scheduled_until: iso(s.to) };
}

export function incidentsJson(p: PageInfo, v: StatusView, unresolved = false): object {
  return { page: page(p, v), incidents: v.incidents.filter((i) => !unresolved || i.status !== 'resolved').map((i) => incident(p, i, v)) };
}

export function summaryJson(p: PageInfo, v: StatusView): object {
  return {
    page: page(p, v),
    components: components(p, v),
    incidents: v.incidents.filter((i) => i.status !== 'resolved').map((i) => incident(p, i, v)),
    scheduled_maintenances: v.maintenances.filter((i) => i.status !== 'resolved' && (i.scheduled?.to ?? 0) > v.asOf).map((i) => maintenance(p, i, v)),
    status: overall(v),
  };
}

export function statusJson(p: PageInfo, v: StatusView): object {
  return { page: page(p, v), status: overall(v) };
}

export function componentsJson(p: PageInfo, v: StatusView): object {
  return { page: page(p, v), components: components(p, v) };
}

export function maintenancesJson(p: PageInfo, v: StatusView): object {
  return { page: page(p, v), scheduled_maintenances: v.maintenances.map((i) => maintenance(p, i, v)) };
}

const BADGE_COLOR: Record<State, string> = {
  operational: '#1b6e2d',
  degraded_performance: '#7a4b00',
  partial_outage: '#b35900',
  major_outage: '#a4161a',
  under_maintenance: '#0b57d0',
};

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A flat badge, shields.io style: the model on the left, its state on the right (white on a coloured field). */
export function badgeSvg(model: string, state: State, value = state.replace(/_/g, ' ')): string {
  const label = model.length > 40 ? `${model.slice(0, 39)}…` : model;
  const lw = 10 + label.length * 7;
  const vw = 10 + value.length * 7;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${lw + vw}" height="20" role="img" aria-label="${esc(label)}: ${esc(value)}">` +
    `<title>${esc(label)}: ${esc(value)}</title>` +
    `<rect width="${lw}" height="20" fill="#24292f"/><rect x="${lw}" width="${vw}" height="20" fill="${BADGE_COLOR[state]}"/>` +
    '<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">' +
    `<text x="5" y="14">${esc(label)}</text><text x="${lw + 5}" y="14">${esc(value)}</text></g></svg>`
  );
}
