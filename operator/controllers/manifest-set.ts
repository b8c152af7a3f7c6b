// The compiler's input, read from the informer caches: every object of the namespace that passes its schema, and
// the Secrets they name. An ApiKey being deleted is compiled as revoked, so it never flickers back to active.
import type { ManifestSet } from '../../gateway/contract/compile.ts';
import {
  keySecretName,
  type Account,
  type ApiKey,
  type McpServerCr,
  type GuardrailCr,
  type ModelRoute,
  type Plan,
  type Secret,
} from '../../crds/schema/index.ts';
import type { CrKind, CustomObject } from '../kube/clients.ts';
import { isDeleting, type Caches } from './context.ts';
import { parseCr, secretManifest, type Parsed } from './parse.ts';

function parsedAll<K extends CrKind>(caches: Caches, kind: K): Array<Parsed<K>> {
  const out: Array<Parsed<K>> = [];
  for (const obj of caches[kind].list()) {
    const r = parsedOne(kind, obj);
    if (r) out.push(r);
  }
  return out;
}

/** The object as the compiler reads it, or null when it does not pass its schema. */
function parsedOne<K extends CrKind>(kind: K, obj: CustomObject | undefined): Parsed<K> | null {
  const r = obj ? parseCr(kind, obj) : null;
  if (!r?.ok) return null;
  // A copy: parseCr's results are shared (cached per object).
  if (kind === 'ApiKey' && obj && isDeleting(obj)) return { ...r.value, spec: { ...(r.value as ApiKey).spec, revoked: true } };
  return r.value;
}

export function referencedSecrets(apiKeys: ApiKey[], routes: ModelRoute[], mcpServers: McpServerCr[] = []): Set<string> {
  const names = new Set<string>();
  for (const s of mcpServers) for (const h of s.spec.headers) if (h.secretKeyRef) names.add(h.secretKeyRef.name);
  for (const s of mcpServers) if (s.spec.oauth) names.add(s.spec.oauth.clientSecretRef.name);
  for (const k of apiKeys) names.add(keySecretName(k.metadata.name, k.spec.secretName));
  for (const r of routes) {
    for (const t of r.spec.targets) if (t.credentials?.secretKeyRef) names.add(t.credentials.secretKeyRef.name);
  }
  return names;
}

/**
 * What one ApiKey's verdict and key record are compiled from: the ApiKey, its Account, that Account's Plan and the
 * key's Secret (an object that is absent or fails its schema is left out, as manifestSetFrom leaves it out).
 */
export function keyManifestSet(caches: Caches, apiKey: string): ManifestSet {
  const key = parsedOne('ApiKey', caches.ApiKey.get(apiKey));
  const account = key ? parsedOne('Account', caches.Account.get(key.spec.accountRef)) : null;
  const plan = account ? parsedOne('Plan', caches.Plan.get(account.spec.planRef)) : null;
  const s = key ? caches.Secret.get(keySecretName(key.metadata.name, key.spec.secretName)) : undefined;
  const secret = s ? secretManifest(s) : null;
  return {
    plans: plan ? [plan] : [],
    accounts: account ? [account] : [],
    apiKeys: key ? [key] : [],
    modelRoutes: [],
    secrets: secret ? [secret] : [],
  };
}

/** Every object of the namespace; `withKeys` false leaves the ApiKeys (and the Secrets only they read) out. */
export function manifestSetFrom(caches: Caches, withKeys = true): ManifestSet {
  const plans: Plan[] = parsedAll(caches, 'Plan');
  const accounts: Account[] = parsedAll(caches, 'Account');
  const apiKeys: ApiKey[] = withKeys ? parsedAll(caches, 'ApiKey') : [];
  const modelRoutes: ModelRoute[] = parsedAll(caches, 'ModelRoute');
  const mcpServers: McpServerCr[] = parsedAll(caches, 'McpServer');
  const guardrails: GuardrailCr[] = parsedAll(caches, 'Guardrail');
  const secrets: Secret[] = [];
  for (const name of referencedSecrets(apiKeys, modelRoutes, mcpServers)) {
    const s = caches.Secret.get(name);
    const m = s ? secretManifest(s) : null;
    if (m) secrets.push(m);
  }
  return { plans, accounts, apiKeys, modelRoutes, mcpServers, guardrails, secrets };
}
