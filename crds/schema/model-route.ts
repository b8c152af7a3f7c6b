import { z } from 'zod';
import { API_VERSION, baseStatus, cel, listMapKeys, metadata, objectName } from './common.ts';

export const PROVIDERS = ['openai', 'anthropic', 'mock'] as const;
export type ProviderKind = (typeof PROVIDERS)[number];

const positiveMs = z.number().int().positive();

/** The largest cached answer a route may allow (8 MiB). */
export const MAX_CACHE_ENTRY_BYTES = 8 * 1024 * 1024;

export const target = z
  .object({
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-zA-Z0-9][-a-zA-Z0-9_.]*$/)
      .describe('Name of the target (x-svc-upstream).'),
    provider: z.enum(PROVIDERS).describe('Wire protocol of the upstream.'),
    baseUrl: z
      .url({ protocol: /^https?$/ })
      // zod's protocol check, which JSON Schema's `format: uri` does not carry.
      .meta(cel({ rule: "self.startsWith('http://') || self.startsWith('https://')", message: 'must be an http or https URL' }))
      .optional()
      .describe('Base URL as the provider SDK takes it (OpenAI-compatible ends in /v1).'),
    upstreamModel: z.string().min(1).max(200).optional().describe('Model id sent upstream; default the route model.'),
    responsesApi: z
      .boolean()
      .optional()
      .describe(
        'provider openai only: the upstream also serves the Responses API ({baseUrl}/responses, as OpenAI does), so /v1/responses calls pass through instead of being translated to Chat Completions.',
      ),
    credentials: z
      .object({
        secretKeyRef: z.object({ name: objectName, key: z.string().min(1) }).optional(),
        env: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
          .optional()
          .describe('Environment variable (standalone).'),
      })
      .optional()
      .describe('Where the upstream API key comes from.'),
    weight: z.number().int().nonnegative().default(1).describe('Relative weight among targets.'),
    timeouts: z
      .object({
        connectMs: positiveMs.default(5_000),
        firstByteMs: positiveMs.default(60_000),
        idleMs: positiveMs.default(60_000),
        totalMs: positiveMs.default(600_000),
      })
      .prefault({})
      .describe('Upstream timeouts in milliseconds.'),
    mock: z
      .object({
        latencyMs: z.number().int().nonnegative().default(0),
        chunkDelayMs: z.number().int().nonnegative().default(0),
      })
      .optional()
      .describe('Settings of the built-in mock provider.'),
  })
  .meta(
    cel(
      {
        // The same check as the config compiler's, made at apply time.
        rule: "self.provider == 'mock' || has(self.baseUrl)",
        messageExpression: "'baseUrl is required for provider ' + self.provider",
      },
      {
        rule: "!has(self.responsesApi) || !self.responsesApi || self.provider == 'openai'",
        message: 'responsesApi applies to provider openai only',
        fieldPath: '.responsesApi',
      },
    ),
  );

export const modelRouteSpec = z.object({
  model: z.string().min(1).max(200).optional().describe('Public model id; default metadata.name.'),
  type: z.enum(['chat', 'embeddings']).default('chat'),
  minTier: z.number().int().nonnegative().default(0).describe('Lowest plan tier that may call it (0 = all).'),
  pricing: z
    .object({
      inputPerMTokUsd: z.number().nonnegative().describe('USD per million input tokens, platform fee included.'),
      outputPerMTokUsd: z.number().nonnegative().default(0).describe('USD per million output tokens, fee included.'),
    })
    .describe('Listed prices (4% platform fee included).'),
  maxOutputTokens: z.number().int().positive().default(4096).describe('Output cap used when a call sets none.'),
  targets: z.array(target).min(1).describe('Upstreams serving the model, chosen by weight.').meta(listMapKeys('name')),
  fallbacks: z.array(z.string().min(1)).default([]).describe('Other model ids tried in order after every target failed.'),
  hostedTools: z
    .enum(['drop', 'reject'])
    .default('drop')
    .describe(
      "Responses API built-in tools that run on OpenAI's side (web_search, file_search, code_interpreter, image_generation, mcp) sent to a target that cannot run them: drop leaves them out of the upstream request (the answer's x-svc-dropped-tools names them), reject answers 400. A tool_choice naming one is refused either way.",
    ),
  cache: z
    .object({
      ttlSeconds: z.number().int().min(1).max(2_592_000).default(300).describe('Seconds a cached answer is served (1 to 30 days).'),
      maxEntryBytes: z
        .number()
        .int()
        .min(0)
        .max(MAX_CACHE_ENTRY_BYTES)
        .default(262_144)
        .describe('Largest answer stored, in bytes (0 stores nothing; at most 8 MiB). A larger answer is served and not stored.'),
      hitCostFraction: z
        .number()
        .min(0)
        .max(1)
        .default(0)
        .describe("Share of the original call's cost a hit is charged (0 to 1, read to the millionth): cost = floor(original cost in nano-USD x fraction)."),
      allowSampling: z
        .boolean()
        .default(false)
        .describe(
          'Also cache calls that sample (temperature above 0, or absent: the providers default to 1; n above 1); off: those bypass the cache unless the request says x-svc-cache: force.',
        ),
    })
    .optional()
    .describe('Exact-match response cache (docs/billing.md, Response cache): off when absent.'),
  probe: z
    .object({ intervalSeconds: z.number().int().min(5).max(86_400).default(180).describe('Seconds between two probes of each target (at least 5).') })
    .optional()
    .describe('Availability probes: a minimal real call to every target, billed to no account.'),
});

export const modelRoute = z
  .object({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('ModelRoute'),
    metadata,
    spec: modelRouteSpec,
    status: z
      .object({
        ...baseStatus,
        targets: z
          .array(
            z.object({
              name: z.string(),
              state: z.enum(['operational', 'degraded_performance', 'partial_outage', 'major_outage', 'under_maintenance']),
              lastProbeTime: z.string().optional().describe('RFC 3339 time of the last probe.'),
              latencyMs: z.number().int().optional(),
              message: z.string().max(1024).optional(),
            }),
          )
          .meta(listMapKeys('name'))
          .optional()
          .describe("Availability of each target, from the probes of the operator's leader."),
      })
      .optional(),
  })
  .meta(
    cel({
      // `in`, not exists(): the latter's estimated cost over an unbounded list of strings exceeds the CEL budget.
      rule: '!((has(self.spec.model) ? self.spec.model : self.metadata.name) in self.spec.fallbacks)',
      message: "cannot name the route's own model (spec.model, default metadata.name)",
      fieldPath: '.spec.fallbacks',
    }),
  );

export type ModelRoute = z.infer<typeof modelRoute>;
export type Target = z.infer<typeof target>;
