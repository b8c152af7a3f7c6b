// Who must be reconciled when an object changes: the object itself and whatever names it (an Account names a Plan,
// an ApiKey an Account and a Secret, a ModelRoute Secrets and other models). Level-based controllers make an
// extra reconcile harmless, so this errs on the side of more.
import { keySecretName } from '../../crds/schema/index.ts';
import type { CrKind } from '../kube/clients.ts';
import type { Caches } from './context.ts';

export type Work = readonly [CrKind | 'Config', string];

const specOf = (o: { spec?: unknown }): Record<string, unknown> => (o.spec ?? {}) as Record<string, unknown>;

interface Named {
  metadata?: { name?: string };
  spec?: unknown;
}

function names(list: readonly Named[], keep: (o: Named) => boolean): string[] {
  return list
    .filter(keep)
    .map((o) => o.metadata?.name ?? '')
    .filter(Boolean);
}

function keysOfAccounts(caches: Caches, accounts: Set<string>): Work[] {
  return names(caches.ApiKey.list(), (k) => accounts.has(String(specOf(k).accountRef))).map((n) => ['ApiKey', n] as const);
}

function mcpSecretUsers(caches: Caches, secret: string): Work[] {
  const servers = caches.McpServer.list().filter((s) => {
    const headers = (specOf(s).headers ?? []) as Array<{ secretKeyRef?: { name?: string } }>;
    const oauth = specOf(s).oauth as { clientSecretRef?: { name?: string } } | undefined;
    return headers.some((h) => h.secretKeyRef?.name === secret) || oauth?.clientSecretRef?.name === secret;
  });
  return names(servers, () => true).map((n) => ['McpServer', n] as const);
}

/**
 * ApiKeys by the Secret that holds their key, built once and kept until an ApiKey is added, deleted or changes its
 * spec (forgetKeySecrets): a resync writes one Secret per key, and scanning every ApiKey on each would be N^2.
 */
const keySecrets = new WeakMap<Caches, Map<string, string[]>>();

export function forgetKeySecrets(caches: Caches): void {
  keySecrets.delete(caches);
}

function keysOfSecret(caches: Caches, secret: string): string[] {
  let index = keySecrets.get(caches);
  if (!index) {
    index = new Map();
    for (const k of caches.ApiKey.list()) {
      const name = k.metadata?.name;
      if (!name) continue;
      const s = keySecretName(name, specOf(k).secretName as string | undefined);
      const list = index.get(s);
      if (list) list.push(name);
      else index.set(s, [name]);
    }
    keySecrets.set(caches, index);
  }
  return index.get(secret) ?? [];
}

function secretUsers(caches: Caches, secret: string): Work[] {
  const routes = caches.ModelRoute.list().filter((r) => {
    const targets = (specOf(r).targets ?? []) as Array<{ credentials?: { secretKeyRef?: { name?: string } } }>;
    return targets.some((t) => t.credentials?.secretKeyRef?.name === secret);
  });
  return [
    ...keysOfSecret(caches, secret).map((n) => ['ApiKey', n] as const),
    ...names(routes, () => true).map((n) => ['ModelRoute', n] as const),
    ...mcpSecretUsers(caches, secret),
  ];
}

export function dependents(caches: Caches, kind: CrKind | 'Secret', name: string): Work[] {
  const config: Work = ['Config', 'config'];
  switch (kind) {
    case 'Plan': {
      const accounts = new Set(names(caches.Account.list(), (a) => specOf(a).planRef === name));
      return [['Plan', name], ...[...accounts].map((a) => ['Account', a] as const), ...keysOfAccounts(caches, accounts), config];
    }
    case 'Account':
      return [['Account', name], ...keysOfAccounts(caches, new Set([name])), config];
    case 'ApiKey':
      return [['ApiKey', name], config];
    case 'ModelRoute':
      return [...names(caches.ModelRoute.list(), () => true).map((n) => ['ModelRoute', n] as const), ['ModelRoute', name], config];
    case 'Secret': {
      const users = secretUsers(caches, name);
      return users.length > 0 ? [...users, config] : [];
    }
    case 'McpServer':
      // Every McpServer: a prefix freed or taken changes another's verdict.
      return [...names(caches.McpServer.list(), () => true).map((n) => ['McpServer', n] as const), ['McpServer', name], config];
    case 'Guardrail':
      return [['Guardrail', name], config];
    case 'Incident':
      // Read by the prober from the cache (operator/availability.ts); nothing to reconcile.
      return [];
    default: {
      const never: never = kind;
      return never;
    }
  }
}
