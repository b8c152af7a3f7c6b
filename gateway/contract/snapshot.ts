// The compiled config contract between operator (writer) and gateways (readers). No Kubernetes here.
import { z } from 'zod';
import { PROVIDERS } from '../../crds/schema/index.ts';

export const SNAPSHOT_SCHEMA = 1;

const timeouts = z.object({
  connectMs: z.number().int(),
  firstByteMs: z.number().int(),
  idleMs: z.number().int(),
  totalMs: z.number().int(),
});

export const credentialRef = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none') }),
  z.object({ kind: z.literal('value'), value: z.string() }),
  z.object({ kind: z.literal('env'), name: z.string() }),
  /** A whole Secret (a cloud's key pair, client secret or service-account JSON): JSON of its data, sealed like a value. */
  z.object({ kind: z.literal('bundle'), value: z.string() }),
  /** The cloud's default credential chain of the process (workload identity). */
  z.object({ kind: z.literal('ambient') }),
]);

export const compiledTarget = z.object({
  name: z.string(),
  provider: z.enum(PROVIDERS),
  baseUrl: z.string().nullable(),
  /** bedrock: AWS region; vertex: location. Absent for the other kinds, so their snapshots hash as before. */
  region: z.string().optional(),
  /** vertex: project id. */
  project: z.string().optional(),
  /** azure-openai: dated API version (deployment URL shape); absent: the v1 API. */
  apiVersion: z.string().optional(),
  upstreamModel: z.string(),
  /** Set (true) only when the upstream serves the Responses API too; absent otherwise, so older snapshots hash the same. */
  responsesApi: z.boolean().optional(),
  /** Set only when an openai target's rerank speaks Voyage AI's shape (top_k, data); absent: Cohere's (top_n, results). */
  rerankApi: z.literal('voyage').optional(),
  credential: credentialRef,
  weight: z.number().int(),
  timeouts,
  mock: z.object({ latencyMs: z.number().int(), chunkDelayMs: z.number().int() }).nullable(),
});

export const compiledModel = z.object({
  id: z.string(),
  type: z.enum(['chat', 'embeddings', 'completions', 'rerank', 'moderation', 'image', 'transcription', 'speech']),
  minTier: z.number().int(),
  inputNanoPerToken: z.number().int(),
  outputNanoPerToken: z.number().int(),
  maxOutputTokens: z.number().int(),
  targets: z.array(compiledTarget),
  fallbacks: z.array(z.string()),
  /** ModelRoute spec.hostedTools when it is reject (absent: drop), so snapshots of other routes hash as before. */
  hostedTools: z.literal('reject').optional(),
  /** ModelRoute spec.cache (the response cache, pipeline/cache.ts); absent: off. hitCostPpm is hitCostFraction in millionths. */
  cache: z.object({ ttlSeconds: z.number().int(), maxEntryBytes: z.number().int(), hitCostPpm: z.number().int(), allowSampling: z.boolean() }).optional(),
  /**
   * type transcription and speech: the unit prices beside the token prices (nano-USD per minute of audio, per
   * character, per audio input token); absent on other models, so their snapshots hash as before.
   */
  audio: z.object({ nanoPerMinute: z.number().int(), nanoPerCharacter: z.number().int(), audioInputNanoPerToken: z.number().int() }).optional(),
  /** type completions: spec.fim when true (the upstream takes a suffix); absent otherwise. */
  fim: z.literal(true).optional(),
  /**
   * type image: spec.pricing.perImage (nano-USD per image by size, and quality; null: every quality), spec.imageSizes
   * and spec.pricing.imageInputPerMTokUsd; each absent when the route does not set it, so other snapshots hash as before.
   */
  imagePrices: z.array(z.object({ size: z.string(), quality: z.string().nullable(), nano: z.number().int() })).optional(),
  imageSizes: z.array(z.string()).optional(),
  imageInputNanoPerToken: z.number().int().optional(),
  /** ModelRoute spec.probe.intervalSeconds when set (availability probes; absent: the process default). */
  probeIntervalSeconds: z.number().int().optional(),
  /** ModelRoute spec.pricing.batchDiscount as the batch price's share of the listed one, in millionths; absent: 500000. */
  batchPpm: z.number().int().optional(),
  /** ModelRoute spec.tracing.captureContent when true (prompts and completions on spans); absent otherwise. */
  captureContent: z.literal(true).optional(),
});

/** Plan or ApiKey spec.mcp: globs over McpServer names and `<server>/<tool>`; null: no restriction. */
export const compiledMcpAccess = z.object({ servers: z.array(z.string()).nullable(), tools: z.array(z.string()).nullable() });

/** An McpServer as gateways serve it (gateway/mcp/). Header values are sealed at rest like target credentials. */
export const compiledMcpServer = z.object({
  name: z.string(),
  /** The upstream's endpoint; null: the built-in mock server (spec.mock). */
  url: z.string().nullable(),
  /** 'sse': the legacy HTTP+SSE transport (upstream-sse.ts); absent: Streamable HTTP. */
  transport: z.literal('sse').optional(),
  prefix: z.string(),
  headers: z.array(z.object({ name: z.string(), credential: credentialRef })),
  /** spec.oauth (the client-credentials grant); its client secret sealed at rest like the headers. Absent: none. */
  oauth: z
    .object({
      tokenUrl: z.string(),
      clientId: z.string(),
      clientSecret: credentialRef,
      scopes: z.array(z.string()),
      audience: z.string().nullable(),
      resource: z.string().nullable(),
    })
    .optional(),
  include: z.array(z.string()),
  exclude: z.array(z.string()),
  perCallNano: z.number().int(),
  /** Prices of single tools by upstream name (nano-USD), in place of perCallNano. */
  toolNano: z.record(z.string(), z.number().int()),
  timeouts: z.object({ connectMs: z.number().int(), firstByteMs: z.number().int(), totalMs: z.number().int() }),
});

/** Plan or Account spec.selfService caps (the console checks self-service keys against them); nano-USD. */
export const compiledSelfService = z.object({
  maxBudgetNano: z.number().int().optional(),
  models: z.array(z.string()).optional(),
  maxKeysPerPerson: z.number().int().optional(),
});
export type CompiledSelfService = z.infer<typeof compiledSelfService>;

export const compiledPlan = z.object({
  name: z.string(),
  tier: z.number().int(),
  anthropicEndpoint: z.boolean(),
  models: z.array(z.string()).nullable(),
  rpm: z.number().int().nullable(),
  tpm: z.number().int().nullable(),
  /** Plan spec.mcp; absent: every McpServer and tool (and snapshots of plans without it hash as before). */
  mcp: compiledMcpAccess.optional(),
  /** Plan spec.selfService; absent when the Plan has none (snapshots without it hash as before). */
  selfService: compiledSelfService.optional(),
});

export const compiledAccount = z.object({
  name: z.string(),
  plan: z.string(),
  trialCreditNano: z.number().int(),
  credits: z.array(z.object({ id: z.string(), amountNano: z.number().int() })),
  /** Account.spec.billing (statements and the SLA); absent when the Account has none. */
  billing: z
    .object({
      invoiceHeader: z.string().optional(),
      poNumber: z.string().optional(),
      taxId: z.string().optional(),
      netTermsDays: z.number().int().optional(),
      sla: z.object({ target: z.number() }).optional(),
    })
    .optional(),
  /** Account.spec.keyPolicy (the console's Create form checks it); absent when the Account has none. */
  keyPolicy: z.object({ maxKeyAgeDays: z.number().int().optional(), requireExpiry: z.boolean() }).optional(),
  /** Account spec.selfService caps; absent when the Account sets none. */
  selfService: compiledSelfService.optional(),
});

/**
 * A Guardrail's remote check (gateway/guardrails/remote/): the service's endpoint and settings, its credential (sealed
 * at rest like a target's), its timeout, failure mode and price (nano-USD per call, per 1,000 characters sent).
 */
export const compiledRemoteCheck = z.object({
  name: z.string(),
  action: z.enum(['block', 'log']),
  timeoutMs: z.number().int(),
  failure: z.enum(['open', 'closed']),
  perCallNano: z.number().int(),
  per1kCharsNano: z.number().int(),
  credential: credentialRef,
  /** Set when its Secret (or the key in it) is missing: the check fails at once and its failure mode decides. */
  credentialMissing: z.literal(true).optional(),
  service: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('bedrock'), guardrailIdentifier: z.string(), guardrailVersion: z.string(), region: z.string(), baseUrl: z.string().nullable() }),
    z.object({
      kind: z.literal('azure-content-safety'),
      endpoint: z.string(),
      apiVersion: z.string(),
      analyze: z.object({ categories: z.array(z.string()), severityThreshold: z.number().int() }).nullable(),
      promptShields: z.boolean(),
    }),
    z.object({ kind: z.literal('openai-moderation'), baseUrl: z.string(), model: z.string(), categories: z.array(z.string()).nullable() }),
    z.object({ kind: z.literal('model-armor'), project: z.string(), location: z.string(), template: z.string(), baseUrl: z.string().nullable() }),
    z.object({ kind: z.literal('webhook'), url: z.string() }),
  ]),
});
export type CompiledRemoteCheck = z.infer<typeof compiledRemoteCheck>;

/** A Guardrail as gateways apply it (gateway/guardrails/); selector lists are globs, null: every name. */
export const compiledGuardrail = z.object({
  name: z.string(),
  selector: z.object({
    plans: z.array(z.string()).nullable(),
    accounts: z.array(z.string()).nullable(),
    keys: z.array(z.string()).nullable(),
    models: z.array(z.string()).nullable(),
  }),
  endpoints: z.array(z.enum(['chat', 'messages', 'responses', 'completions', 'embeddings', 'mcp'])),
  stages: z.array(z.enum(['request', 'response'])),
  checks: z.array(
    z.object({
      name: z.string(),
      detector: z.enum(['secrets', 'email', 'phone', 'card', 'iban', 'ip', 'national-id', 'regex', 'words']),
      action: z.enum(['block', 'mask', 'log']),
      restore: z.boolean(),
      highEntropy: z.boolean(),
      patterns: z.array(z.object({ name: z.string(), pattern: z.string() })),
      words: z.array(z.string()),
    }),
  ),
  /** The remote checks (services called over the network); absent when none, so other snapshots hash as before. */
  remote: z.array(compiledRemoteCheck).optional(),
});
export type CompiledGuardrail = z.infer<typeof compiledGuardrail>;

export const snapshot = z.object({
  schema: z.literal(SNAPSHOT_SCHEMA),
  version: z.string(),
  plans: z.record(z.string(), compiledPlan),
  accounts: z.record(z.string(), compiledAccount),
  models: z.record(z.string(), compiledModel),
  /** McpServers by name; absent when there are none, so snapshots without them hash as before. */
  mcpServers: z.record(z.string(), compiledMcpServer).optional(),
  /** Guardrails sorted by name; absent when there are none, so snapshots without them hash as before. */
  guardrails: z.array(compiledGuardrail).optional(),
});

/** A key as the store holds it: never the key itself, only its HMAC. */
export const keyRecord = z.object({
  hash: z.string(),
  name: z.string(),
  display: z.string(),
  account: z.string(),
  monthlyBudgetNano: z.number().int().nullable(),
  rpm: z.number().int().nullable(),
  tpm: z.number().int().nullable(),
  models: z.array(z.string()).nullable(),
  revoked: z.boolean(),
  /** When the key stops (ms; gateway/contract/key-expiry.ts); absent or null: never. */
  expiresAt: z.number().int().nullable().optional(),
  /** When the key was made (ms), for /v1/me; absent or null: unknown (keys of manifest files). */
  createdAt: z.number().int().nullable().optional(),
  /** ApiKey spec.mcp; absent: no restriction beyond the plan's. */
  mcp: compiledMcpAccess.optional(),
});

export type Snapshot = z.infer<typeof snapshot>;
export type CompiledModel = z.infer<typeof compiledModel>;
export type CompiledTarget = z.infer<typeof compiledTarget>;
export type CompiledPlan = z.infer<typeof compiledPlan>;
export type CompiledAccount = z.infer<typeof compiledAccount>;
export type CredentialRef = z.infer<typeof credentialRef>;
export type KeyRecord = z.infer<typeof keyRecord>;
export type CompiledMcpServer = z.infer<typeof compiledMcpServer>;
export type CompiledMcpAccess = z.infer<typeof compiledMcpAccess>;

/**
 * A snapshot entry by a name a client chose: own properties only, so "constructor", "__proto__" or "toString" is
 * an unknown name, never a property of Object.prototype.
 */
export function entryOf<T>(table: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}
