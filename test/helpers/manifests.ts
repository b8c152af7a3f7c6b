// Builders of the manifests tests apply: the same YAML a user would `kubectl apply`, Secrets included.
import { stringify } from 'yaml';
import type { z } from 'zod';
import type { accountSpec, apiKeySpec, mcpServerSpec, modelRouteSpec, planSpec, target } from '../../crds/schema/index.ts';
import { generateKey } from '../../gateway/contract/keys.ts';

const API = 'gateway.svc.dev/v1alpha1';

/** Typed from the zod schemas of crds/schema, so a renamed or retyped field breaks the build of every test using it. */
export type TargetSpec = z.input<typeof target>;
type PlanSpec = z.input<typeof planSpec>;
type AccountSpec = Omit<z.input<typeof accountSpec>, 'planRef'>;
type ApiKeySpec = Omit<z.input<typeof apiKeySpec>, 'accountRef'>;
type ModelRouteSpec = Omit<z.input<typeof modelRouteSpec>, 'targets' | 'pricing'> & Partial<Pick<z.input<typeof modelRouteSpec>, 'pricing'>>;

export function plan(name: string, spec: PlanSpec): object {
  return { apiVersion: API, kind: 'Plan', metadata: { name }, spec };
}

export function account(name: string, planRef: string, extra: AccountSpec = {}): object {
  return { apiVersion: API, kind: 'Account', metadata: { name }, spec: { planRef, ...extra } };
}

/** An ApiKey and the Secret holding its key, so the test knows the key. */
export function apiKey(name: string, accountRef: string, extra: ApiKeySpec = {}, key = generateKey()): { docs: object[]; key: string } {
  return {
    key,
    docs: [
      { apiVersion: API, kind: 'ApiKey', metadata: { name }, spec: { accountRef, ...extra } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-key` }, stringData: { key } },
    ],
  };
}

export function route(name: string, targets: TargetSpec[], extra: ModelRouteSpec = {}): object {
  return {
    apiVersion: API,
    kind: 'ModelRoute',
    metadata: { name },
    spec: { pricing: { inputPerMTokUsd: 1.04, outputPerMTokUsd: 2.08 }, targets, ...extra },
  };
}

export function mcpServer(name: string, spec: z.input<typeof mcpServerSpec>): object {
  return { apiVersion: API, kind: 'McpServer', metadata: { name }, spec };
}

export function secret(name: string, data: Record<string, string>): object {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: data };
}

export function toYaml(docs: object[]): string {
  return docs.map((d) => stringify(d)).join('---\n');
}

/** A Builder and a free plan, one account on each, a key for each. */
export function basics(): { docs: object[]; keys: { builder: string; free: string } } {
  const b = apiKey('builder-key', 'acme');
  const f = apiKey('free-key', 'hobby');
  return {
    keys: { builder: b.key, free: f.key },
    docs: [
      plan('builder', { tier: 2, anthropicEndpoint: true }),
      plan('free', { tier: 0 }),
      account('acme', 'builder', { trialCreditUsd: 1, credits: [{ id: 'c1', amountUsd: 100 }] }),
      account('hobby', 'free'),
      ...b.docs,
      ...f.docs,
    ],
  };
}
