import { z } from 'zod';
import { API_VERSION, baseStatus, cel, listMapKeys, metadata, objectName } from './common.ts';

export const PROVIDERS = ['openai', 'anthropic', 'mock', 'bedrock', 'azure-openai', 'vertex', 'gemini'] as const;
export type ProviderKind = (typeof PROVIDERS)[number];
/** The clouds' provider kinds (docs/clouds.md): credentials from the cloud's own chain, endpoints from region/project. */
export const CLOUD_PROVIDERS = ['bedrock', 'azure-openai', 'vertex', 'gemini'] as const;

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
    provider: z
      .enum(PROVIDERS)
      .describe('Wire protocol of the upstream: openai, anthropic, mock, or a cloud: bedrock, azure-openai, vertex, gemini (docs/clouds.md).'),
    baseUrl: z
      .url({ protocol: /^https?$/ })
      // zod's protocol check, which JSON Schema's `format: uri` does not carry.
      .meta(cel({ rule: "self.startsWith('http://') || self.startsWith('https://')", message: 'must be an http or https URL' }))
      .optional()
      .describe(
        "Base URL as the provider SDK takes it (OpenAI-compatible ends in /v1). azure-openai: the resource endpoint (https://{resource}.openai.azure.com). bedrock, vertex, gemini: optional, the cloud's endpoint for the region is the default (bedrock: bedrock-runtime, and bedrock-agent-runtime for rerank models).",
      ),
    region: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9-]+$/)
      .optional()
      .describe('bedrock: the AWS region (us-east-1); vertex: the location (us-central1, or global).'),
    project: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[a-z0-9][-a-z0-9.:]*$/)
      .optional()
      .describe('vertex: the Google Cloud project id.'),
    apiVersion: z
      .string()
      .min(1)
      .max(40)
      .regex(/^[0-9a-z.-]+$/)
      .optional()
      .describe(
        'azure-openai: the dated API version (2024-10-21), which selects the deployment URL shape /openai/deployments/{upstreamModel}/...; absent, the v1 API (/openai/v1/..., the deployment name in model).',
      ),
    upstreamModel: z.string().min(1).max(200).optional().describe('Model id sent upstream; default the route model.'),
    responsesApi: z
      .boolean()
      .optional()
      .describe(
        'provider openai, and azure-openai on the v1 API (no apiVersion): the upstream also serves the Responses API ({baseUrl}/responses, as OpenAI does; Azure: /openai/v1/responses), so /v1/responses calls pass through instead of being translated to Chat Completions.',
      ),
    rerankApi: z
      .enum(['cohere', 'voyage'])
      .optional()
      .describe(
        "provider openai, type rerank: the wire shape of the upstream's POST {baseUrl}/rerank: cohere (Cohere v2, Jina, vLLM: top_n, answers in results; the default) or voyage (Voyage AI: top_k, answers in data). Bedrock's rerank models need no setting.",
      ),
    credentials: z
      .object({
        secretKeyRef: z
          .object({
            name: objectName,
            key: z
              .string()
              .min(1)
              .optional()
              .describe('The key holding the API key. Clouds: absent, the whole Secret is read, with the keys docs/clouds.md lists per cloud.'),
          })
          .optional(),
        env: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
          .optional()
          .describe('Environment variable (standalone).'),
        ambient: z
          .object({})
          .strict()
          .optional()
          .describe(
            "Clouds only: the cloud's default credential chain of the process (workload identity in a cluster: EKS IRSA or Pod Identity, AKS Workload Identity, GKE metadata server).",
          ),
      })
      .meta(
        cel({
          rule: '(has(self.secretKeyRef) ? 1 : 0) + (has(self.env) ? 1 : 0) + (has(self.ambient) ? 1 : 0) <= 1',
          message: 'takes one of secretKeyRef, env, ambient',
        }),
      )
      .optional()
      .describe('Where the upstream credential comes from.'),
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
        // The same checks as the config compiler's (compile-routes.ts), made at apply time.
        rule: "!(self.provider in ['openai', 'anthropic', 'azure-openai']) || has(self.baseUrl)",
        messageExpression: "'baseUrl is required for provider ' + self.provider",
      },
      {
        rule: "!(self.provider in ['bedrock', 'vertex']) || has(self.region)",
        messageExpression: "'region is required for provider ' + self.provider",
        fieldPath: '.region',
      },
      {
        rule: "self.provider != 'vertex' || has(self.project)",
        message: 'project is required for provider vertex',
        fieldPath: '.project',
      },
      {
        rule: "!has(self.credentials) || !has(self.credentials.ambient) || self.provider in ['bedrock', 'azure-openai', 'vertex', 'gemini']",
        message: 'credentials.ambient applies to the cloud providers only (bedrock, azure-openai, vertex, gemini)',
        fieldPath: '.credentials.ambient',
      },
      {
        rule: "!has(self.credentials) || !has(self.credentials.secretKeyRef) || has(self.credentials.secretKeyRef.key) || self.provider in ['bedrock', 'azure-openai', 'vertex']",
        message: 'credentials.secretKeyRef.key is required for this provider (only bedrock, azure-openai and vertex read a whole Secret)',
        fieldPath: '.credentials.secretKeyRef',
      },

      {
        rule: "!has(self.responsesApi) || !self.responsesApi || self.provider == 'openai' || (self.provider == 'azure-openai' && !has(self.apiVersion))",
        message: 'responsesApi applies to provider openai, and to azure-openai without apiVersion, only',
        fieldPath: '.responsesApi',
      },
      {
        rule: "!has(self.rerankApi) || self.provider == 'openai'",
        message: 'rerankApi applies to provider openai only',
        fieldPath: '.rerankApi',
      },
    ),
  );

/** What a model serves: the endpoint family its calls come through (docs/api.md). */
export const MODEL_TYPES = ['chat', 'embeddings', 'completions', 'rerank', 'moderation', 'image', 'transcription', 'speech'] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

/** An image size as OpenAI's Images API writes it (WIDTHxHEIGHT), or auto. */
const imageSize = z
  .string()
  .max(11)
  .regex(/^([1-9][0-9]{1,4}x[1-9][0-9]{1,4}|auto)$/, 'must be WIDTHxHEIGHT (1024x1024) or auto');

export const modelRouteSpec = z.object({
  model: z.string().min(1).max(200).optional().describe('Public model id; default metadata.name.'),
  type: z
    .enum(MODEL_TYPES)
    .default('chat')
    .describe(
      'What the model serves: chat (/v1/chat/completions, /v1/responses, /anthropic/v1/messages), embeddings (/v1/embeddings), completions (/v1/completions, legacy text completions), rerank (/v1/rerank, /cohere/v2/rerank), moderation (/v1/moderations), image (/v1/images/generations, /v1/images/edits), transcription (/v1/audio/transcriptions and /v1/audio/translations), speech (/v1/audio/speech).',
    ),
  fim: z
    .boolean()
    .default(false)
    .describe('type completions: the upstream completes fill-in-the-middle (a `suffix` in the request); off: a call with a suffix answers 400.'),
  minTier: z.number().int().nonnegative().default(0).describe('Lowest plan tier that may call it (0 = all).'),
  pricing: z
    .object({
      inputPerMTokUsd: z.number().nonnegative().describe('USD per million input tokens, platform fee included.'),
      outputPerMTokUsd: z.number().nonnegative().default(0).describe('USD per million output tokens, fee included.'),
      perSearchUnitUsd: z
        .number()
        .nonnegative()
        .optional()
        .describe(
          'type rerank: USD per search unit (one query over up to 100 documents, as Cohere bills), fee included, charged on top of the per-token prices (set those to 0 to bill by search unit only).',
        ),
      imageInputPerMTokUsd: z
        .number()
        .nonnegative()
        .optional()
        .describe(
          'type image: USD per million input image tokens (the images of an edit, as gpt-image-1 reports them), fee included; absent: inputPerMTokUsd.',
        ),
      perImage: z
        .array(
          z.object({
            size: imageSize.describe('The image size, WIDTHxHEIGHT (1024x1024).'),
            quality: z
              .string()
              .min(1)
              .max(20)
              .regex(/^[a-z]+$/)
              .optional()
              .describe('The quality this price is for (standard, hd, low, medium, high); absent: every quality of this size.'),
            usd: z.number().nonnegative().describe('USD per image, fee included.'),
          }),
        )
        .max(64)
        .optional()
        .describe(
          'type image: prices per image by size and quality (dall-e-3, Imagen, Bedrock image models); the sizes listed are the sizes the model serves. Absent: the image model is priced by the tokens the upstream reports (gpt-image-1), at inputPerMTokUsd, imageInputPerMTokUsd and outputPerMTokUsd.',
        ),
      perMinuteUsd: z
        .number()
        .nonnegative()
        .optional()
        .describe(
          'type transcription: USD per minute of audio (whisper-1 bills 0.006), fee included, charged per started second of the audio the file holds (read from its own header, never more than its bytes can hold), on top of any per-token prices.',
        ),
      perMCharactersUsd: z
        .number()
        .nonnegative()
        .optional()
        .describe('type speech: USD per million characters of input (tts-1 bills 15), fee included, on top of any per-token prices.'),
      audioInputPerMTokUsd: z
        .number()
        .nonnegative()
        .optional()
        .describe(
          "type transcription: USD per million audio input tokens, as gpt-4o-transcribe reports them in usage (input_token_details.audio_tokens); the text tokens of the prompt are priced by inputPerMTokUsd and the transcript's tokens by outputPerMTokUsd. type speech prices its generated audio tokens with outputPerMTokUsd.",
        ),
      batchDiscount: z
        .number()
        .min(0)
        .max(1)
        .optional()
        .describe(
          'Share taken off the per-token prices for the lines of a batch (/v1/batches, /anthropic/v1/messages/batches); default 0.5, the batch discount of OpenAI and Anthropic. A batch holds the full price of every line at creation and is charged the discounted price of what ran.',
        ),
    })
    .describe('Listed prices (4% platform fee included).'),
  imageSizes: z
    .array(imageSize)
    .max(64)
    .optional()
    .describe(
      "type image priced by tokens: the sizes the model serves (a call asking another is refused with 400 before any upstream call); absent: any size the upstream takes. With pricing.perImage the sizes are that table's.",
    ),
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
  tracing: z
    .object({
      captureContent: z
        .boolean()
        .default(false)
        .describe(
          'Record prompts and completions on the trace spans of calls to this model (gen_ai.input.messages, gen_ai.system_instructions, gen_ai.output.messages), redacted of anything that looks like a secret and cut to 16,384 characters each. Off by default: prompts are often personal data.',
        ),
    })
    .optional()
    .describe('OpenTelemetry tracing of calls to this model (tracing itself is on when the gateway has OTEL_EXPORTER_OTLP_ENDPOINT).'),
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
    cel(
      {
        // `in`, not exists(): the latter's estimated cost over an unbounded list of strings exceeds the CEL budget.
        rule: '!((has(self.spec.model) ? self.spec.model : self.metadata.name) in self.spec.fallbacks)',
        message: "cannot name the route's own model (spec.model, default metadata.name)",
        fieldPath: '.spec.fallbacks',
      },
      {
        rule: "!has(self.spec.pricing.perSearchUnitUsd) || self.spec.type == 'rerank'",
        message: 'perSearchUnitUsd applies to type rerank only',
        fieldPath: '.spec.pricing.perSearchUnitUsd',
      },
      {
        rule: "self.spec.type != 'rerank' || !has(self.spec.pricing.outputPerMTokUsd) || self.spec.pricing.outputPerMTokUsd == 0.0",
        message: 'a rerank has no output tokens: price it with inputPerMTokUsd and perSearchUnitUsd',
        fieldPath: '.spec.pricing.outputPerMTokUsd',
      },
      {
        rule: "(!has(self.spec.pricing.perImage) && !has(self.spec.pricing.imageInputPerMTokUsd) && !has(self.spec.imageSizes)) || self.spec.type == 'image'",
        message: 'perImage, imageInputPerMTokUsd and imageSizes apply to type image only',
        fieldPath: '.spec.pricing',
      },
      {
        rule: "!has(self.spec.pricing.perMinuteUsd) || self.spec.type == 'transcription'",
        message: 'perMinuteUsd applies to type transcription only',
        fieldPath: '.spec.pricing.perMinuteUsd',
      },
      {
        rule: "!has(self.spec.pricing.audioInputPerMTokUsd) || self.spec.type == 'transcription'",
        message: 'audioInputPerMTokUsd applies to type transcription only',
        fieldPath: '.spec.pricing.audioInputPerMTokUsd',
      },
      {
        rule: "!has(self.spec.pricing.perMCharactersUsd) || self.spec.type == 'speech'",
        message: 'perMCharactersUsd applies to type speech only',
        fieldPath: '.spec.pricing.perMCharactersUsd',
      },
      {
        rule: "!has(self.spec.fim) || !self.spec.fim || self.spec.type == 'completions'",
        message: 'fim applies to type completions only',
        fieldPath: '.spec.fim',
      },
    ),
  );

export type ModelRoute = z.infer<typeof modelRoute>;
export type Target = z.infer<typeof target>;
