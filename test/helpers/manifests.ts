// Builders of the manifests tests apply: the same YAML a user would `kubectl apply`, Secrets included.
import { stringify } from 'yaml';
import { generateKey } from '../../gateway/contract/keys.ts';

const API = 'gateway.svc.dev/v1alpha1';

export interface TargetSpec {
  name: string;
  provider: 'openai' | 'anthropic' | 'mock';
  baseUrl?: string;
  upstreamModel?: string;
  responsesApi?: boolean;
  weight?: number;
  timeouts?: { connectMs?: number; firstByteMs?: number; idleMs?: number; totalMs?: number };
  credentials?: { secretKeyRef?: { name: string; key: string }; env?: string };
}

export function plan(name: string, spec: Record<string, unknown>): object {
  return { apiVersion: API, kind: 'Plan', metadata: { name }, spec };
}

export function account(name: string, planRef: string, extra: Record<string, unknown> = {}): object {
  return { apiVersion: API, kind: 'Account', metadata: { name }, spec: { planRef, ...extra } };
}

/** An ApiKey and the Secret holding its key, so the test knows the key. */
export function apiKey(name: string, accountRef: string, extra: Record<string, unknown> = {}, key = generateKey()): { docs: object[]; key: string } {
  return {
    key,
    docs: [
      { apiVersion: API, kind: 'ApiKey', metadata: { name }, spec: { accountRef, ...extra } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-key` }, stringData: { key } },
    ],
  };
}

export function route(name: string, targets: TargetSpec[], extra: Record<string, unknown> = {}): object {
  return {
    apiVersion: API, kind: 'ModelRoute', metadata: { name },
    spec: { pricing: { inputPerMTokUsd: 1.04, outputPerMTokUsd: 2.08 }, targets, ...extra },
  };
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
