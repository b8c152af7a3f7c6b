// A Guardrail's remote checks -> the snapshot's `remote` list: each service's settings, its credential read from its
// Secret (or named: env, ambient), its price in nano-USD. A check whose Secret (or key) is missing is still served
// with no credential: its calls then fail, and its `failure` mode decides (closed refuses them), so a Secret that is
// not there yet never lets traffic pass unchecked by accident. The verdict names what is missing.
import type { GuardrailCheck } from '../../crds/schema/index.ts';
import { usdToNano } from './money.ts';
import type { CompiledRemoteCheck, CredentialRef } from './snapshot.ts';

type Secrets = Map<string, Record<string, string>>;
type Credentials = NonNullable<NonNullable<GuardrailCheck['webhook']>['credentials']>;

/** The default name of a remote check: its service, as written in errors, facts and metrics. */
export const SERVICE_NAMES = {
  bedrock: 'bedrock',
  azureContentSafety: 'azure-content-safety',
  openaiModeration: 'openai-moderation',
  modelArmor: 'model-armor',
  webhook: 'webhook',
} as const;

export const isRemote = (c: GuardrailCheck): boolean => c.detector === undefined;

function credentialOf(c: Credentials | undefined, secrets: Secrets, scope: string): { credential: CredentialRef; missing: string | null } {
  if (c?.secretKeyRef) {
    const { name, key } = c.secretKeyRef;
    const secret = secrets.get(name);
    if (!secret) return { credential: { kind: 'none' }, missing: `Secret ${name} does not exist${scope}` };
    if (key === undefined) return { credential: { kind: 'bundle', value: JSON.stringify(secret) }, missing: null };
    const value = secret[key];
    if (value === undefined) return { credential: { kind: 'none' }, missing: `Secret ${name} has no key ${key}` };
    return { credential: { kind: 'value', value }, missing: null };
  }
  if (c?.env) return { credential: { kind: 'env', name: c.env }, missing: null };
  if (c?.ambient) return { credential: { kind: 'ambient' }, missing: null };
  return { credential: { kind: 'none' }, missing: null };
}

function serviceOf(c: GuardrailCheck): { service: CompiledRemoteCheck['service']; credentials: Credentials | undefined } {
  if (c.bedrock) {
    const b = c.bedrock;
    const service = { kind: 'bedrock' as const, guardrailIdentifier: b.guardrailIdentifier, guardrailVersion: b.guardrailVersion, region: b.region };
    return { service: { ...service, baseUrl: b.baseUrl?.replace(/\/+$/, '') ?? null }, credentials: b.credentials };
  }
  if (c.azureContentSafety) {
    const a = c.azureContentSafety;
    const analyze = a.analyze ? { categories: [...a.analyze.categories], severityThreshold: a.analyze.severityThreshold } : null;
    const endpoint = a.endpoint.replace(/\/+$/, '');
    return {
      service: { kind: 'azure-content-safety', endpoint, apiVersion: a.apiVersion, analyze, promptShields: a.promptShields },
      credentials: a.credentials,
    };
  }
  if (c.openaiModeration) {
    const o = c.openaiModeration;
    const service = { kind: 'openai-moderation' as const, baseUrl: o.baseUrl.replace(/\/+$/, ''), model: o.model, categories: o.categories ?? null };
    return { service, credentials: o.credentials };
  }
  if (c.modelArmor) {
    const m = c.modelArmor;
    const service = { kind: 'model-armor' as const, project: m.project, location: m.location, template: m.template };
    return { service: { ...service, baseUrl: m.baseUrl?.replace(/\/+$/, '') ?? null }, credentials: m.credentials };
  }
  if (c.webhook) return { service: { kind: 'webhook', url: c.webhook.url }, credentials: c.webhook.credentials };
  throw new Error('not a remote check');
}

const nameOf = (c: GuardrailCheck): string => c.name ?? SERVICE_NAMES[(Object.keys(SERVICE_NAMES) as Array<keyof typeof SERVICE_NAMES>).find((k) => c[k])!];

/** The remote checks of a Guardrail, and what their credentials lack (null: nothing). */
export function compileRemoteChecks(
  checks: readonly GuardrailCheck[],
  secrets: Secrets,
  scope: string,
): { remote: CompiledRemoteCheck[]; missing: string | null } {
  const remote: CompiledRemoteCheck[] = [];
  let missing: string | null = null;
  for (const c of checks.filter(isRemote)) {
    const { service, credentials } = serviceOf(c);
    const cred = credentialOf(credentials, secrets, scope);
    missing ??= cred.missing;
    remote.push({
      name: nameOf(c),
      action: c.action === 'log' ? 'log' : 'block',
      timeoutMs: c.timeoutMs,
      failure: c.failure,
      perCallNano: usdToNano(c.pricing?.perCallUsd ?? 0),
      per1kCharsNano: usdToNano(c.pricing?.per1kCharactersUsd ?? 0),
      credential: cred.credential,
      ...(cred.missing ? { credentialMissing: true as const } : {}),
      service,
    });
  }
  return { remote, missing };
}
