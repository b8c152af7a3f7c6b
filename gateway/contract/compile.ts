// Pure compile step: validated manifests (Secrets included) -> config snapshot + key records.
// Used by the standalone gateway and by the operator; problems are returned as data, naming object and field.
import { createHash } from 'node:crypto';
import type { Account, ApiKey, ModelRoute, Plan, Secret, Target } from '../../crds/schema/index.ts';
import { secretValues } from '../../crds/schema/index.ts';
import { displayKey, hashKey, isWellFormedKey, KEY_PREFIX } from './keys.ts';
import { perMTokToNanoPerToken, usdToNano } from './money.ts';
import type { CompiledModel, CompiledTarget, CredentialRef, KeyRecord, Snapshot } from './snapshot.ts';
import { SNAPSHOT_SCHEMA } from './snapshot.ts';
import { canonicalJson } from './canonical-json.ts';

export interface ManifestSet {
  plans: Plan[];
  accounts: Account[];
  apiKeys: ApiKey[];
  modelRoutes: ModelRoute[];
  secrets: Secret[];
}

export interface Problem {
  object: string; // Kind/name
  field: string;
  message: string;
}

export interface CompileOptions {
  pepper: string;
  /** Called for an ApiKey whose Secret holds no key (standalone: generate and print once). */
  keyFor?: (apiKey: ApiKey) => string | null;
}

export interface CompileResult {
  snapshot: Snapshot;
  keys: KeyRecord[];
  problems: Problem[];
}

function minLimit(a: number | undefined, ceiling: number | undefined): number | null {
  if (a === undefined) return ceiling ?? null;
  return ceiling === undefined ? a : Math.min(a, ceiling);
}

function credentialOf(t: Target, secrets: Map<string, Record<string, string>>, where: Problem): CredentialRef | Problem {
  const c = t.credentials;
  if (c?.secretKeyRef) {
    const value = secrets.get(c.secretKeyRef.name)?.[c.secretKeyRef.key];
    if (value === undefined) {
      return { ...where, message: `Secret ${c.secretKeyRef.name} has no key ${c.secretKeyRef.key}` };
    }
    return { kind: 'value', value };
  }
  if (c?.env) return { kind: 'env', name: c.env };
  return { kind: 'none' };
}

function compileTarget(
  r: ModelRoute, t: Target, i: number, secrets: Map<string, Record<string, string>>, problems: Problem[],
): CompiledTarget {
  const object = `ModelRoute/${r.metadata.name}`;
  const base = `spec.targets[${i}]`;
  if (t.provider !== 'mock' && !t.baseUrl) problems.push({ object, field: `${base}.baseUrl`, message: 'required for provider ' + t.provider });
  const cred = credentialOf(t, secrets, { object, field: `${base}.credentials`, message: '' });
  if ('message' in cred) problems.push(cred);
  if (t.responsesApi === true && t.provider !== 'openai') {
    problems.push({ object, field: `${base}.responsesApi`, message: 'applies to provider openai only' });
  }
  return {
    name: t.name,
    provider: t.provider,
    baseUrl: t.baseUrl ? t.baseUrl.replace(/\/+$/, '') : null,
    upstreamModel: t.upstreamModel ?? r.spec.model ?? r.metadata.name,
    ...(t.responsesApi === true && t.provider === 'openai' ? { responsesApi: true } : {}),
    credential: 'message' in cred ? { kind: 'none' } : cred,
    weight: t.weight,
    timeouts: t.timeouts,
    mock: t.provider === 'mock' ? (t.mock ?? { latencyMs: 0, chunkDelayMs: 0 }) : null,
  };
}

function compileModels(set: ManifestSet, secrets: Map<string, Record<string, string>>, problems: Problem[]): Record<string, CompiledModel> {
  // No prototype: a model id such as "constructor" or "__proto__" is a plain entry.
  const models = Object.create(null) as Record<string, CompiledModel>;
  for (const r of sortByName(set.modelRoutes)) {
    const id = r.spec.model ?? r.metadata.name;
    if (Object.hasOwn(models, id)) problems.push({ object: `ModelRoute/${r.metadata.name}`, field: 'spec.model', message: `model ${id} is defined twice` });
    models[id] = {
      id,
      type: r.spec.type,
      minTier: r.spec.minTier,
      inputNanoPerToken: perMTokToNanoPerToken(r.spec.pricing.inputPerMTokUsd),
      outputNanoPerToken: perMTokToNanoPerToken(r.spec.pricing.outputPerMTokUsd),
      maxOutputTokens: r.spec.maxOutputTokens,
      targets: r.spec.targets.map((t, i) => compileTarget(r, t, i, secrets, problems)),
      fallbacks: r.spec.fallbacks,
    };
  }
  for (const r of set.modelRoutes) {
    r.spec.fallbacks.forEach((f, i) => {
      if (!Object.hasOwn(models, f)) problems.push({ object: `ModelRoute/${r.metadata.name}`, field: `spec.fallbacks[${i}]`, message: `unknown model ${f}` });
    });
  }
  return models;
}

function sortByName<T extends { metadata: { name: string } }>(xs: T[]): T[] {
  return [...xs].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
}

function compileKeys(set: ManifestSet, snapshot: Omit<Snapshot, 'version'>, secrets: Map<string, Record<string, string>>, opts: CompileOptions, problems: Problem[]): KeyRecord[] {
  const keys: KeyRecord[] = [];
  for (const k of sortByName(set.apiKeys)) {
    const object = `ApiKey/${k.metadata.name}`;
    const account = snapshot.accounts[k.spec.accountRef];
    if (!account) {
      problems.push({ object, field: 'spec.accountRef', message: `unknown Account ${k.spec.accountRef}` });
      continue;
    }
    const plan = snapshot.plans[account.plan];
    const settings = {
      name: k.metadata.name,
      account: account.name,
      monthlyBudgetNano: k.spec.monthlyBudgetUsd === undefined ? null : usdToNano(k.spec.monthlyBudgetUsd),
      rpm: minLimit(k.spec.limits?.rpm, plan?.rpm ?? undefined),
      tpm: minLimit(k.spec.limits?.tpm, plan?.tpm ?? undefined),
      models: k.spec.models ?? null,
      revoked: k.spec.revoked,
    };
    // A key made in the console: only its HMAC exists (the ApiKey carries it), no Secret.
    if (k.spec.keyHash) {
      keys.push({ ...settings, hash: k.spec.keyHash, display: k.spec.displayedKey ?? `${KEY_PREFIX}…` });
      continue;
    }
    const secretName = k.spec.secretName ?? `${k.metadata.name}-key`;
    const stored = secrets.get(secretName)?.key;
    let key: string | null = stored ?? null;
    if (stored !== undefined && !isWellFormedKey(stored.trim())) {
      problems.push({ object, field: 'spec.secretName', message: `Secret ${secretName} holds a malformed key under data key "key"` });
      continue;
    }
    if (key === null) key = opts.keyFor?.(k) ?? null;
    if (key === null) continue;
    key = key.trim();
    keys.push({ ...settings, hash: hashKey(key, opts.pepper), display: displayKey(key) });
  }
  return keys;
}

export function compile(set: ManifestSet, opts: CompileOptions): CompileResult {
  const problems: Problem[] = [];
  const secrets = new Map(set.secrets.map((s) => [s.metadata.name, secretValues(s)]));
  const plans: Snapshot['plans'] = {};
  for (const p of sortByName(set.plans)) {
    plans[p.metadata.name] = {
      name: p.metadata.name,
      tier: p.spec.tier,
      anthropicEndpoint: p.spec.anthropicEndpoint,
      models: p.spec.models ?? null,
      rpm: p.spec.limits?.rpm ?? null,
      tpm: p.spec.limits?.tpm ?? null,
    };
  }
  const accounts: Snapshot['accounts'] = {};
  for (const a of sortByName(set.accounts)) {
    if (!plans[a.spec.planRef]) problems.push({ object: `Account/${a.metadata.name}`, field: 'spec.planRef', message: `unknown Plan ${a.spec.planRef}` });
    const seen = new Set<string>();
    a.spec.credits.forEach((c, i) => {
      if (seen.has(c.id)) problems.push({ object: `Account/${a.metadata.name}`, field: `spec.credits[${i}].id`, message: `duplicate credit id ${c.id}` });
      seen.add(c.id);
    });
    accounts[a.metadata.name] = {
      name: a.metadata.name,
      plan: a.spec.planRef,
      trialCreditNano: usdToNano(a.spec.trialCreditUsd),
      credits: a.spec.credits.map((c) => ({ id: c.id, amountNano: usdToNano(c.amountUsd) })),
    };
  }
  const models = compileModels(set, secrets, problems);
  const body = { schema: SNAPSHOT_SCHEMA, plans, accounts, models } as const;
  const version = createHash('sha256').update(canonicalJson(body)).digest('hex').slice(0, 16);
  const snapshot: Snapshot = { ...body, version };
  const keys = compileKeys(set, body, secrets, opts, problems);
  return { snapshot, keys, problems };
}
