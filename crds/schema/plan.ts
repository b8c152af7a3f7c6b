import { z } from 'zod';
import { API_VERSION, baseStatus, limits, metadata, modelPattern } from './common.ts';
import { mcpAccess } from './mcp-server.ts';
import { selfServiceCaps } from './self-service.ts';

export const planSpec = z.object({
  tier: z.number().int().nonnegative().describe('Rank of the plan; models with minTier <= tier are open to it.'),
  anthropicEndpoint: z.boolean().default(false).describe('Whether keys on this plan may call the Anthropic-compatible endpoint (Builder and above).'),
  models: z.array(modelPattern).optional().describe('Model ids or globs the plan may call; default: every model whose minTier <= tier.'),
  limits: limits.optional().describe('Default and ceiling of the rate limits of keys on this plan.'),
  mcp: mcpAccess.optional().describe('MCP servers and tools open to keys on this plan (globs); default: all of them.'),
  selfService: selfServiceCaps
    .optional()
    .describe("Caps of the keys people make for themselves in the console, for every account on this plan (with the Account's, the tighter holds)."),
});

export const plan = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Plan'),
  metadata,
  spec: planSpec,
  status: z.object(baseStatus).optional(),
});

export type Plan = z.infer<typeof plan>;
