// The API layer: one zod schema per kind, the single source of the CRDs in crds/*.yaml.
export * from './common.ts';
export * from './plan.ts';
export * from './account.ts';
export * from './api-key.ts';
export * from './model-route.ts';
export * from './incident.ts';
export * from './mcp-server.ts';
export * from './guardrail.ts';
export * from './secret.ts';
import { plan } from './plan.ts';
import { account } from './account.ts';
import { apiKey } from './api-key.ts';
import { modelRoute } from './model-route.ts';
import { incident } from './incident.ts';
import { mcpServer } from './mcp-server.ts';
import { guardrail } from './guardrail.ts';
import { secret } from './secret.ts';

/** The zod schema of each custom resource kind, by kind (crds/crd-kinds.ts adds their resource names). */
export const CR_SCHEMAS = {
  Plan: plan,
  Account: account,
  ApiKey: apiKey,
  ModelRoute: modelRoute,
  Incident: incident,
  McpServer: mcpServer,
  Guardrail: guardrail,
} as const;
export const KINDS = { ...CR_SCHEMAS, Secret: secret } as const;
export type KindName = keyof typeof KINDS;
