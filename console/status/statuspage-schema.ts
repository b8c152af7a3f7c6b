// The response shapes of Atlassian Statuspage's public API v2 (https://developer.statuspage.io, "Status API"; the
// same fields as <page>.statuspage.io/api/v2/*.json), written as zod schemas: the tests validate our JSON with them.
import { z } from 'zod';

const time = z.iso.datetime({ offset: true });
const componentStatus = z.enum(['operational', 'degraded_performance', 'partial_outage', 'major_outage', 'under_maintenance']);

export const spPage = z.object({ id: z.string(), name: z.string(), url: z.string(), time_zone: z.string(), updated_at: time });

export const spStatus = z.object({ indicator: z.enum(['none', 'minor', 'major', 'critical']), description: z.string() });

export const spComponent = z.object({
  id: z.string(),
  name: z.string(),
  status: componentStatus,
  created_at: time,
  updated_at: time,
  position: z.number().int(),
  description: z.string().nullable(),
  showcase: z.boolean(),
  start_date: z.string().nullable(),
  group_id: z.string().nullable(),
  page_id: z.string(),
  group: z.boolean(),
  only_show_if_degraded: z.boolean(),
});

export const spIncidentUpdate = z.object({
  id: z.string(),
  status: z.string(),
  body: z.string(),
  incident_id: z.string(),
  created_at: time,
  updated_at: time,
  display_at: time,
  affected_components: z.array(z.object({ code: z.string(), name: z.string(), old_status: componentStatus, new_status: componentStatus })).nullable(),
  deliver_notifications: z.boolean(),
  custom_tweet: z.string().nullable(),
  tweet_id: z.string().nullable(),
});

export const spIncident = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(['investigating', 'identified', 'monitoring', 'resolved', 'postmortem']),
  created_at: time,
  updated_at: time,
  monitoring_at: time.nullable(),
  resolved_at: time.nullable(),
  impact: z.enum(['none', 'minor', 'major', 'critical']),
  shortlink: z.string(),
  started_at: time,
  page_id: z.string(),
  incident_updates: z.array(spIncidentUpdate),
  components: z.array(spComponent),
});

export const spScheduledMaintenance = spIncident.extend({
  status: z.enum(['scheduled', 'in_progress', 'verifying', 'completed']),
  scheduled_for: time,
  scheduled_until: time,
});

export const spSummary = z.object({
  page: spPage,
  components: z.array(spComponent),
  incidents: z.array(spIncident),
  scheduled_maintenances: z.array(spScheduledMaintenance),
  status: spStatus,
});
export const spStatusJson = z.object({ page: spPage, status: spStatus });
export const spComponents = z.object({ page: spPage, components: z.array(spComponent) });
export const spIncidents = z.object({ page: spPage, incidents: z.array(spIncident) });
export const spMaintenances = z.object({ page: spPage, scheduled_maintenances: z.array(spScheduledMaintenance) });
