import { z } from 'zod';
import { API_VERSION, baseStatus, cel, metadata } from './common.ts';

const step = z.enum(['investigating', 'identified', 'monitoring', 'resolved']);
const time = z.iso.datetime({ offset: true });

export const incidentSpec = z
  .object({
    title: z.string().min(1).max(200).describe('Shown on /status and in incidents.json.'),
    models: z.array(z.string().min(1).max(200)).min(1).max(100).describe('Public model ids affected.'),
    impact: z.enum(['none', 'minor', 'major', 'critical']).default('major'),
    status: step.default('investigating').describe('investigating -> identified -> monitoring -> resolved.'),
    state: z
      .enum(['degraded_performance', 'partial_outage', 'major_outage'])
      .optional()
      .describe("The affected models' state while the incident is open; probes do not overwrite it."),
    updates: z
      .array(z.object({ time, status: step, message: z.string().min(1).max(4000) }))
      .max(200)
      .default([])
      .describe('What was said, oldest first.'),
    maintenance: z.object({ start: time, end: time }).optional().describe('A scheduled maintenance window: the models are under_maintenance inside it.'),
  })
  .meta(
    cel({
      rule: '!has(self.maintenance) || timestamp(self.maintenance.end) > timestamp(self.maintenance.start)',
      message: 'maintenance.end must be after maintenance.start',
      fieldPath: '.maintenance',
    }),
  );

export const incident = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Incident'),
  metadata,
  spec: incidentSpec,
  status: z.object({ ...baseStatus }).optional(),
});

export type IncidentCr = z.infer<typeof incident>;
