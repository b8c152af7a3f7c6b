import { z } from 'zod';
import { metadata } from './common.ts';

/** A core/v1 Secret as manifests carry it: `data` is base64, `stringData` plain and wins on conflict. */
export const secret = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Secret'),
  metadata,
  type: z.string().optional(),
  data: z.record(z.string(), z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64')).optional(),
  stringData: z.record(z.string(), z.string()).optional(),
});

export type Secret = z.infer<typeof secret>;

export function secretValues(s: Secret): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
  for (const [k, v] of Object.entries(s.stringData ?? {})) out[k] = v;
  return out;
}
