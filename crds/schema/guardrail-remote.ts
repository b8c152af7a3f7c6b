// The remote checks of a Guardrail: the clouds' own content services (AWS Bedrock Guardrails, Azure AI Content
// Safety, OpenAI moderation, Google Model Armor) and a webhook of the team's own, each one field of a check.
import { z } from 'zod';
import { cel, objectName, usd } from './common.ts';

/** The check fields naming a remote service (exactly one per check, or a local detector). */
export const REMOTE_SERVICES = ['bedrock', 'azureContentSafety', 'openaiModeration', 'modelArmor', 'webhook'] as const;
export type RemoteService = (typeof REMOTE_SERVICES)[number];

const credentials = z
  .object({
    secretKeyRef: z
      .object({
        name: objectName,
        key: z.string().min(1).optional().describe('The key holding the API key or token; absent: the whole Secret (bedrock, azureContentSafety, modelArmor).'),
      })
      .optional(),
    env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .optional()
      .describe('Environment variable (standalone).'),
    ambient: z.object({}).strict().optional().describe("The cloud's default credential chain of the process (bedrock, azureContentSafety, modelArmor)."),
  })
  .meta(
    cel({
      rule: '(has(self.secretKeyRef) ? 1 : 0) + (has(self.env) ? 1 : 0) + (has(self.ambient) ? 1 : 0) <= 1',
      message: 'takes one of secretKeyRef, env, ambient',
    }),
  )
  .describe('Where the credential comes from, as for a ModelRoute target (docs/clouds.md lists the keys of a whole Secret per cloud).');

const endpointUrl = z
  .string()
  .regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL')
  .max(2048);

export const bedrockCheck = z.object({
  guardrailIdentifier: z.string().min(1).max(2048).describe('The guardrail id or ARN.'),
  guardrailVersion: z.string().min(1).max(16).describe('A version number, or DRAFT.'),
  region: z.string().min(1).max(32),
  baseUrl: endpointUrl.optional().describe('Endpoint override (default https://bedrock-runtime.{region}.amazonaws.com).'),
  credentials,
});

export const azureContentSafetyCheck = z.object({
  endpoint: endpointUrl.describe('The resource endpoint, e.g. https://my-resource.cognitiveservices.azure.com.'),
  apiVersion: z.string().min(1).max(32).default('2024-09-01'),
  analyze: z
    .object({
      categories: z
        .array(z.enum(['Hate', 'SelfHarm', 'Sexual', 'Violence']))
        .min(1)
        .default(['Hate', 'SelfHarm', 'Sexual', 'Violence']),
      severityThreshold: z.number().int().min(0).max(7).default(4).describe('A category at this severity or above is a match.'),
    })
    .optional()
    .describe('Text analysis (text:analyze).'),
  promptShields: z.boolean().default(false).describe('Prompt Shields (text:shieldPrompt) on the request: attacks in the prompt and in tool results.'),
  credentials,
});

export const openaiModerationCheck = z.object({
  baseUrl: endpointUrl.default('https://api.openai.com/v1'),
  model: z.string().min(1).max(100).default('omni-moderation-latest'),
  categories: z.array(z.string().min(1).max(64)).max(50).optional().describe('Categories that match (e.g. violence, self-harm/intent); default: any flagged.'),
  credentials,
});

export const modelArmorCheck = z.object({
  project: z.string().min(1).max(100),
  location: z.string().min(1).max(50),
  template: z.string().min(1).max(100),
  baseUrl: endpointUrl.optional().describe('Endpoint override (default https://modelarmor.{location}.rep.googleapis.com).'),
  credentials,
});

export const webhookCheck = z.object({
  url: endpointUrl,
  credentials: credentials.optional().describe('A bearer token sent as Authorization (secretKeyRef with key, or env).'),
});

export const remoteCheckFields = {
  bedrock: bedrockCheck.optional().describe('AWS Bedrock Guardrails ApplyGuardrail.'),
  azureContentSafety: azureContentSafetyCheck.optional().describe('Azure AI Content Safety: text analysis and Prompt Shields.'),
  openaiModeration: openaiModerationCheck.optional().describe("OpenAI's moderation endpoint."),
  modelArmor: modelArmorCheck.optional().describe("Google Model Armor's sanitizeUserPrompt and sanitizeModelResponse."),
  webhook: webhookCheck.optional().describe("A team's own HTTP service (docs/guardrails.md gives its JSON contract)."),
  timeoutMs: z.number().int().min(10).max(60_000).default(2_000).describe('Remote checks: the longest wait for the service.'),
  failure: z
    .enum(['open', 'closed'])
    .default('closed')
    .describe(
      'Remote checks, when the service fails or times out: closed refuses the call (content_blocked, the guardrail named unavailable); open lets it pass and records the failure.',
    ),
  pricing: z
    .object({
      perCallUsd: usd.default(0),
      per1kCharactersUsd: usd.default(0).describe('Per 1,000 characters sent to the service.'),
    })
    .optional()
    .describe("Remote checks: what a call of the service costs, added to the caller's charge when the call is served."),
};
