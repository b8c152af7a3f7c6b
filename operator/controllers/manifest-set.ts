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
import type { CrKind } from '../kube/clients.ts';
import { isDeleting, type Caches } from './context.ts';
import { parseCr, secretManifest, type Parsed } from './parse.ts';

function parsedAll<K extends CrKind>(caches: Caches, kind: K): Array<Parsed<K>> {
  const out: Array<Parsed<K>> = [];
  for (const obj of caches[kind].list()) {
    const r = parseCr(kind, obj);
    if (!r.ok) continue;
    if (kind === 'ApiKey' && isDeleting(obj)) (r.value as ApiKey).spec.revoked = true;
    out.push(r.value);
  }
  return out;
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

export function manifestSetFrom(caches: Caches): ManifestSet {
  const plans: Plan[] = parsedAll(caches, 'Plan');
  const accounts: Account[] = parsedAll(caches, 'Account');
  const apiKeys: ApiKey[] = parsedAll(caches, 'ApiKey');
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
