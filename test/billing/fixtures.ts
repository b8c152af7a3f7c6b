// Manifests shared by the multi-process billing tests: a plan, mock models (one fast, one slow), keys with Secrets.
import { account, apiKey, plan } from '../helpers/manifests.ts';

const API = 'gateway.svc.dev/v1alpha1';

/** 1.04 / 2.08 USD per million tokens: 1040 and 2080 nano-USD a token, the 4% fee included. */
export function mockRoute(name: string, latencyMs = 0): object {
  return {
    apiVersion: API,
    kind: 'ModelRoute',
    metadata: { name },
    spec: {
      pricing: { inputPerMTokUsd: 1.04, outputPerMTokUsd: 2.08 },
      targets: [{ name: `${name}-t`, provider: 'mock', mock: { latencyMs, chunkDelayMs: 0 } }],
    },
  };
}

export interface KeySpec {
  name: string;
  account: string;
  spec?: Record<string, unknown>;
}

export interface Setup {
  docs: object[];
  keys: Record<string, string>;
}

/** One builder plan, the given accounts and keys, the fast and slow mock models. */
export function setup(accounts: Array<{ name: string; spec?: Record<string, unknown> }>, keys: KeySpec[], slowMs = 3000): Setup {
  const made = keys.map((k) => ({ name: k.name, ...apiKey(k.name, k.account, k.spec ?? {}) }));
  return {
    keys: Object.fromEntries(made.map((m) => [m.name, m.key])),
    docs: [
      plan('builder', { tier: 2, anthropicEndpoint: true }),
      ...accounts.map((a) => account(a.name, 'builder', a.spec ?? {})),
      ...made.flatMap((m) => m.docs),
      mockRoute('mock-fast'),
      mockRoute('mock-slow', slowMs),
    ],
  };
}

/** The same manifests with one ApiKey's spec changed (a later or a stale version of the config). */
export function withKeySpec(docs: object[], name: string, spec: Record<string, unknown>): object[] {
  return docs.map((d) => {
    const o = d as { kind?: string; metadata?: { name?: string }; spec?: Record<string, unknown> };
    return o.kind === 'ApiKey' && o.metadata?.name === name ? { ...o, spec: { ...o.spec, ...spec } } : d;
  });
}
