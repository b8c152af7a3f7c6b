// The API layer: one zod schema per kind, the single source of the CRDs in crds/*.yaml.
export * from './common.ts';
export * from './plan.ts';
export * from './account.ts';
export * from './api-key.ts';
export * from './model-route.ts';
export * from './secret.ts';
import { plan } from './plan.ts';
import { account } from './account.ts';
import { apiKey } from './api-key.ts';
import { modelRoute } from './model-route.ts';
import { secret } from './secret.ts';

export const KINDS = { Plan: plan, Account: account, ApiKey: apiKey, ModelRoute: modelRoute, Secret: secret } as const;
export type KindName = keyof typeof KINDS;
