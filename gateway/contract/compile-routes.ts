// ModelRoutes -> compiled models. A target that cannot be called as written (its credentials Secret or the key in
// it missing, no baseUrl) is left out of the snapshot: the route's other targets
// serve, and a route with none left stays published with no targets, so its calls get 503 no_target_available
// (gateway/pipeline/dispatch.ts) rather than an upstream call without credentials. Only a missing Secret (or key in
// it) is marked `leftOut`, so a standalone gateway starts with a warning: the Secret may come later, as in a cluster.
// A target missing what its kind needs (region, project, baseUrl) is a mistake in the manifest itself, which the
// CRD refuses in a cluster, so standalone refuses to start on it.
import { CLOUD_PROVIDERS, type ModelRoute, type Target } from '../../crds/schema/index.ts';
import { perMTokToNanoPerToken, usdToNano } from './money.ts';
import type { CompiledModel, CompiledTarget, CredentialRef } from './snapshot.ts';
import { accepted, inScope, type RouteVerdict, type TargetVerdict } from './verdict.ts';
import type { Problem } from './problem.ts';

type Secrets = Map<string, Record<string, string>>;
type Refusal = { field: string; reason: 'InvalidSpec' | 'MissingBaseUrl' | 'MissingSecret' | 'MissingSecretKey'; message: string };
/** Refusals that only say the credentials are not there yet: the target is left out, the manifest is not wrong. */
const MISSING_CREDENTIALS: ReadonlySet<Refusal['reason']> = new Set(['MissingSecret', 'MissingSecretKey']);

const isCloud = (p: Target['provider']): boolean => (CLOUD_PROVIDERS as readonly string[]).includes(p);
/** Providers that read a whole Secret when secretKeyRef names no key (docs/clouds.md lists the keys per cloud). */
const WHOLE_SECRET: ReadonlySet<Target['provider']> = new Set(['bedrock', 'azure-openai', 'vertex']);

/** An azure-openai whole Secret holds an api-key, or a service principal (docs/clouds.md, Azure OpenAI). */
function azureSecretLacks(secret: Record<string, string>): string | null {
  if (secret['api-key']) return null;
  const missing = ['AZURE_TENANT_ID', 'AZURE_CLIENT_ID', 'AZURE_CLIENT_SECRET'].filter((k) => !secret[k]);
  return missing.length === 0 ? null : `neither api-key nor ${missing.join(', ')}`;
}

function credentialOf(t: Target, secrets: Secrets, scope: string | undefined): CredentialRef | Refusal {
  const c = t.credentials;
  const field = 'credentials';
  const given = [c?.secretKeyRef, c?.env, c?.ambient].filter((x) => x !== undefined).length;
  if (given > 1) return { field, reason: 'InvalidSpec', message: 'credentials takes one of secretKeyRef, env, ambient' };
  if (c?.secretKeyRef) {
    const { name, key } = c.secretKeyRef;
    const field = 'credentials.secretKeyRef';
    const secret = secrets.get(name);
    if (!secret) return { field, reason: 'MissingSecret', message: `Secret ${name} does not exist${inScope(scope)}` };
    if (key === undefined) {
      if (!WHOLE_SECRET.has(t.provider)) return { field, reason: 'InvalidSpec', message: `provider ${t.provider} needs secretKeyRef.key` };
      const lacking = t.provider === 'azure-openai' ? azureSecretLacks(secret) : null;
      if (lacking) return { field, reason: 'MissingSecretKey', message: `Secret ${name} has ${lacking}` };
      return { kind: 'bundle', value: JSON.stringify(secret) };
    }
    const value = secret[key];
    if (value === undefined) return { field, reason: 'MissingSecretKey', message: `Secret ${name} has no key ${key}` };
    return { kind: 'value', value };
  }
  if (c?.env) return { kind: 'env', name: c.env };
  if (c?.ambient) {
    if (!isCloud(t.provider))
      return { field: 'credentials.ambient', reason: 'InvalidSpec', message: `credentials.ambient applies to the cloud providers only, not ${t.provider}` };
    return { kind: 'ambient' };
  }
  return { kind: 'none' };
}

/** Why a target cannot be served as written, or its credential. */
function checkTarget(t: Target, secrets: Secrets, scope: string | undefined): CredentialRef | Refusal {
  const needsBaseUrl = t.provider === 'openai' || t.provider === 'anthropic' || t.provider === 'azure-openai';
  if (needsBaseUrl && !t.baseUrl) return { field: 'baseUrl', reason: 'MissingBaseUrl', message: `provider ${t.provider} needs a baseUrl` };
  if ((t.provider === 'bedrock' || t.provider === 'vertex') && !t.region)
    return { field: 'region', reason: 'InvalidSpec', message: `provider ${t.provider} needs a region` };
  if (t.provider === 'vertex' && !t.project) return { field: 'project', reason: 'InvalidSpec', message: 'provider vertex needs a project' };
  return credentialOf(t, secrets, scope);
}

const RERANK_API_OPENAI_ONLY = 'applies to provider openai only';
const RESPONSES_API_OPENAI_ONLY = 'applies to provider openai, and to azure-openai without apiVersion, only';
/** The targets that may pass /v1/responses through: OpenAI, and Azure OpenAI's v1 API (the dated API has no Responses). */
const servesResponses = (t: Target): boolean => t.provider === 'openai' || (t.provider === 'azure-openai' && t.apiVersion === undefined);

function compileTarget(r: ModelRoute, t: Target, credential: CredentialRef): CompiledTarget {
  return {
    name: t.name,
    provider: t.provider,
    baseUrl: t.baseUrl ? t.baseUrl.replace(/\/+$/, '') : null,
    upstreamModel: t.upstreamModel ?? r.spec.model ?? r.metadata.name,
    ...(t.region !== undefined ? { region: t.region } : {}),
    ...(t.project !== undefined ? { project: t.project } : {}),
    ...(t.apiVersion !== undefined ? { apiVersion: t.apiVersion } : {}),
    ...(t.responsesApi === true && servesResponses(t) ? { responsesApi: true } : {}),
    ...(t.rerankApi === 'voyage' && t.provider === 'openai' ? { rerankApi: 'voyage' as const } : {}),
    credential,
    weight: t.weight,
    timeouts: t.timeouts,
    mock: t.provider === 'mock' ? (t.mock ?? { latencyMs: 0, chunkDelayMs: 0 }) : null,
  };
}

/** Fields that apply to one kind of model only (the CRD's CEL rules refuse them at apply time; standalone here). */
function kindProblems(r: ModelRoute): Array<{ field: string; message: string }> {
  const out: Array<{ field: string; message: string }> = [];
  const { type, fim, pricing } = r.spec;
  if (pricing.perSearchUnitUsd !== undefined && type !== 'rerank')
    out.push({ field: 'spec.pricing.perSearchUnitUsd', message: 'perSearchUnitUsd applies to type rerank only' });
  if (type === 'rerank' && pricing.outputPerMTokUsd !== 0)
    out.push({ field: 'spec.pricing.outputPerMTokUsd', message: 'a rerank has no output tokens: price it with inputPerMTokUsd and perSearchUnitUsd' });
  if ((pricing.perImage !== undefined || pricing.imageInputPerMTokUsd !== undefined || r.spec.imageSizes !== undefined) && type !== 'image')
    out.push({ field: 'spec.pricing', message: 'perImage, imageInputPerMTokUsd and imageSizes apply to type image only' });
  if (pricing.perMinuteUsd !== undefined && type !== 'transcription')
    out.push({ field: 'spec.pricing.perMinuteUsd', message: 'perMinuteUsd applies to type transcription only' });
  if (pricing.audioInputPerMTokUsd !== undefined && type !== 'transcription')
    out.push({ field: 'spec.pricing.audioInputPerMTokUsd', message: 'audioInputPerMTokUsd applies to type transcription only' });
  if (pricing.perMCharactersUsd !== undefined && type !== 'speech')
    out.push({ field: 'spec.pricing.perMCharactersUsd', message: 'perMCharactersUsd applies to type speech only' });
  if (fim && type !== 'completions') out.push({ field: 'spec.fim', message: 'fim applies to type completions only' });
  return out;
}

/** An image route's prices and sizes (pipeline/image-price.ts reads them); each only when the route sets it. */
function imagePricing(r: ModelRoute): Pick<CompiledModel, 'imagePrices' | 'imageSizes' | 'imageInputNanoPerToken'> {
  const { perImage, imageInputPerMTokUsd } = r.spec.pricing;
  return {
    ...(perImage ? { imagePrices: perImage.map((p) => ({ size: p.size, quality: p.quality ?? null, nano: usdToNano(p.usd) })) } : {}),
    ...(r.spec.imageSizes ? { imageSizes: r.spec.imageSizes } : {}),
    ...(imageInputPerMTokUsd !== undefined ? { imageInputNanoPerToken: perMTokToNanoPerToken(imageInputPerMTokUsd) } : {}),
  };
}

interface CompiledRoute {
  model: CompiledModel;
  targets: TargetVerdict[];
}

function compileRoute(r: ModelRoute, secrets: Secrets, scope: string | undefined, problems: Problem[]): CompiledRoute {
  const object = `ModelRoute/${r.metadata.name}`;
  const compiled: CompiledTarget[] = [];
  const targets = r.spec.targets.map((t, i): TargetVerdict => {
    const checked = checkTarget(t, secrets, scope);
    if ('reason' in checked) {
      const problem: Problem = { object, field: `spec.targets[${i}].${checked.field}`, message: `target ${t.name}: ${checked.message}` };
      problems.push(MISSING_CREDENTIALS.has(checked.reason) ? { ...problem, leftOut: 'target' } : problem);
      return { name: t.name, ready: false, served: false, reason: checked.reason, message: `Target ${t.name}: ${checked.message}.` };
    }
    compiled.push(compileTarget(r, t, checked));
    // Served without the option (the CRD's CEL rule refuses it; standalone refuses to start on it).
    if (t.responsesApi === true && !servesResponses(t)) {
      problems.push({ object, field: `spec.targets[${i}].responsesApi`, message: RESPONSES_API_OPENAI_ONLY });
      return { name: t.name, ready: false, served: true, reason: 'InvalidSpec', message: `Target ${t.name}: responsesApi ${RESPONSES_API_OPENAI_ONLY}.` };
    }
    if (t.rerankApi !== undefined && t.provider !== 'openai') {
      problems.push({ object, field: `spec.targets[${i}].rerankApi`, message: RERANK_API_OPENAI_ONLY });
      return { name: t.name, ready: false, served: true, reason: 'InvalidSpec', message: `Target ${t.name}: rerankApi ${RERANK_API_OPENAI_ONLY}.` };
    }
    return { name: t.name, ...accepted(`Target ${t.name} is published.`) };
  });
  for (const p of kindProblems(r)) problems.push({ object, ...p });
  const id = r.spec.model ?? r.metadata.name;
  const model: CompiledModel = {
    id,
    type: r.spec.type,
    minTier: r.spec.minTier,
    inputNanoPerToken: perMTokToNanoPerToken(r.spec.pricing.inputPerMTokUsd),
    // A rerank has no output tokens: its output count is search units, priced per unit (estimate.ts).
    outputNanoPerToken: r.spec.type === 'rerank' ? usdToNano(r.spec.pricing.perSearchUnitUsd ?? 0) : perMTokToNanoPerToken(r.spec.pricing.outputPerMTokUsd),
    maxOutputTokens: r.spec.maxOutputTokens,
    targets: compiled,
    fallbacks: r.spec.fallbacks,
    ...(r.spec.type === 'completions' && r.spec.fim ? { fim: true as const } : {}),
    ...(r.spec.type === 'image' ? imagePricing(r) : {}),
    ...(r.spec.type === 'transcription' || r.spec.type === 'speech'
      ? {
          audio: {
            nanoPerMinute: usdToNano(r.spec.pricing.perMinuteUsd ?? 0),
            nanoPerCharacter: perMTokToNanoPerToken(r.spec.pricing.perMCharactersUsd ?? 0),
            audioInputNanoPerToken: perMTokToNanoPerToken(r.spec.pricing.audioInputPerMTokUsd ?? 0),
          },
        }
      : {}),
    ...(r.spec.hostedTools === 'reject' ? { hostedTools: 'reject' as const } : {}),
    ...(r.spec.cache
      ? {
          cache: {
            ttlSeconds: r.spec.cache.ttlSeconds,
            maxEntryBytes: r.spec.cache.maxEntryBytes,
            hitCostPpm: Math.round(r.spec.cache.hitCostFraction * 1_000_000),
            allowSampling: r.spec.cache.allowSampling,
          },
        }
      : {}),
    ...(r.spec.pricing.batchDiscount !== undefined ? { batchPpm: Math.round((1 - r.spec.pricing.batchDiscount) * 1_000_000) } : {}),
    // Set only when the route says it, so snapshots of routes without a probe section hash as before.
    ...(r.spec.probe ? { probeIntervalSeconds: r.spec.probe.intervalSeconds } : {}),
    ...(r.spec.tracing?.captureContent === true ? { captureContent: true as const } : {}),
  };
  return { model, targets };
}

function routeVerdict(r: ModelRoute, route: CompiledRoute, models: Record<string, CompiledModel>, owner: string): RouteVerdict {
  const { targets } = route;
  const id = route.model.id;
  const served = targets.filter((t) => t.served).length;
  if (owner !== r.metadata.name) {
    return { ready: false, served: false, reason: 'DuplicateModel', message: `ModelRoute ${owner} publishes model ${id} in its place.`, targets };
  }
  const refused = targets.find((t) => !t.served);
  if (refused) {
    const rest =
      served > 0
        ? `It is left out: ${served} of ${targets.length} targets serve model ${id}.`
        : `No target is left: calls to model ${id} get 503 no_target_available.`;
    return { ready: false, served: served > 0, reason: refused.reason, message: `${refused.message} ${rest}`, targets };
  }
  const flawed = targets.find((t) => !t.ready);
  if (flawed) return { ready: false, served: true, reason: flawed.reason, message: flawed.message, targets };
  const unknown = r.spec.fallbacks.filter((f) => !Object.hasOwn(models, f));
  if (unknown.length > 0) {
    return { ready: false, served: true, reason: 'UnknownFallback', message: `No ModelRoute publishes fallback model ${unknown.join(', ')}.`, targets };
  }
  return { ...accepted(`Model ${id} is published to the gateways with ${served} target(s).`), targets };
}

export function compileModels(
  routes: ModelRoute[],
  secrets: Secrets,
  scope: string | undefined,
  problems: Problem[],
): { models: Record<string, CompiledModel>; verdicts: Record<string, RouteVerdict> } {
  // No prototype: a model id such as "constructor" or "__proto__" is a plain entry.
  const models = Object.create(null) as Record<string, CompiledModel>;
  /** Model id -> the route that publishes it: of two routes with one id, the last by name. */
  const owners = new Map<string, string>();
  const compiled = routes.map((r) => ({ r, route: compileRoute(r, secrets, scope, problems) }));
  for (const { r, route } of compiled) {
    const id = route.model.id;
    const previous = owners.get(id);
    if (previous !== undefined) {
      problems.push({
        object: `ModelRoute/${previous}`,
        field: 'spec.model',
        message: `model ${id} is defined twice: ModelRoute ${r.metadata.name} publishes it in its place`,
      });
    }
    owners.set(id, r.metadata.name);
    models[id] = route.model;
  }
  const verdicts: Record<string, RouteVerdict> = {};
  for (const { r, route } of compiled) {
    r.spec.fallbacks.forEach((f, i) => {
      if (!Object.hasOwn(models, f)) problems.push({ object: `ModelRoute/${r.metadata.name}`, field: `spec.fallbacks[${i}]`, message: `unknown model ${f}` });
    });
    verdicts[r.metadata.name] = routeVerdict(r, route, models, owners.get(route.model.id) ?? r.metadata.name);
  }
  return { models, verdicts };
}
