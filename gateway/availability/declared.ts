// Incidents people declare (the Incident kind: kubectl apply, or standalone manifests) as the status page shows them.
import type { IncidentCr } from '../../crds/schema/index.ts';
import type { Incident } from './types.ts';

/** An Incident object (as the API server or the manifests give it) in the page's terms; null when it does not parse. */
export function declaredIncident(obj: { metadata?: { name?: string; creationTimestamp?: string | Date }; spec?: unknown }): Incident | null {
  const spec = obj.spec as IncidentCr['spec'] | undefined;
  const name = obj.metadata?.name;
  if (!spec || !name || !Array.isArray(spec.models)) return null;
  const updates = (spec.updates ?? []).map((u) => ({ at: Date.parse(u.time), status: u.status, message: u.message })).filter((u) => Number.isFinite(u.at));
  const created = obj.metadata?.creationTimestamp ? new Date(obj.metadata.creationTimestamp).getTime() : (updates[0]?.at ?? 0);
  const last = updates.at(-1)?.at ?? created;
  const status = spec.status ?? 'investigating';
  const window = spec.maintenance ? { from: Date.parse(spec.maintenance.start), to: Date.parse(spec.maintenance.end) } : null;
  return {
    id: `declared-${name}`,
    title: spec.title,
    source: 'declared',
    models: [...spec.models],
    impact: spec.impact ?? 'major',
    status,
    createdAt: updates[0]?.at ?? created,
    updatedAt: last,
    resolvedAt: status === 'resolved' ? last : null,
    updates,
    scheduled: window && Number.isFinite(window.from) && Number.isFinite(window.to) ? window : null,
    ...(spec.state ? { state: spec.state } : {}),
  };
}

export function declaredIncidents(objs: readonly Parameters<typeof declaredIncident>[0][]): Incident[] {
  return objs.map(declaredIncident).filter((i): i is Incident => i !== null);
}
