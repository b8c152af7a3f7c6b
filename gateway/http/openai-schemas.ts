// Request bodies of the OpenAI-compatible endpoints: every field the gateway reads or translates is checked for
// type and range as OpenAI checks it (openai/openai-openapi's CreateChatCompletionRequest and
// CreateEmbeddingRequest), so a mistake is a 400 naming the field here rather than whatever each upstream makes of
// it; the rest passes through to the upstream untouched.
import { z } from 'zod';

export const TASK_TYPE_MAX = 64;
/** OpenAI's bounds: choices per call, stop sequences, tools per call, log probabilities per token. */
export const N_MAX = 128;
export const STOP_MAX = 4;
export const TOOLS_MAX = 128;
export const TOP_LOGPROBS_MAX = 20;
/** Inputs per embeddings call (OpenAI's 2048), and output dimensions: OpenAI's largest model, text-embedding-3-large. */
export const EMBEDDING_INPUTS_MAX = 2048;
export const EMBEDDING_DIMENSIONS_MAX = 3072;

const metadata = z.looseObject({ task_type: z.string().optional() }).nullish();

// Content parts, by message role (ChatCompletionRequest*MessageContentPart).
const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const imagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: z.string(), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const audioPart = z.looseObject({ type: z.literal('input_audio'), input_audio: z.looseObject({ data: z.string(), format: z.string() }) });
const filePart = z.looseObject({
  type: z.literal('file'),
  file: z.looseObject({ file_data: z.string().optional(), file_id: z.string().optional(), filename: z.string().optional() }),
});
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

const parts = <T extends z.ZodType>(part: T) => z.union([z.string(), z.array(part).min(1)]);
const userParts = parts(z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart]));
const textParts = parts(textPart);
const assistantParts = parts(z.discriminatedUnion('type', [textPart, refusalPart]));

const toolCall = z.discriminatedUnion('type', [
  z.looseObject({ id: z.string(), type: z.literal('function'), function: z.looseObject({ name: z.string(), arguments: z.string() }) }),
  z.looseObject({ id: z.string(), type: z.literal('custom'), custom: z.looseObject({ name: z.string(), input: z.string() }) }),
]);

const message = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: textParts, name: z.string().optional() }),
  z.looseObject({ role: z.literal('developer'), content: textParts, name: z.string().optional() }),
  z.looseObject({ role: z.literal('user'), content: userParts, name: z.string().optional() }),
  z.looseObject({
    role: z.literal('assistant'),
    content: assistantParts.nullish(),
    refusal: z.string().nullish(),
    name: z.string().optional(),
    tool_calls: z.array(toolCall).optional(),
  }),
  z.looseObject({ role: z.literal('tool'), content: textParts, tool_call_id: z.string() }),
  z.looseObject({ role: z.literal('function'), content: z.string().nullable(), name: z.string() }),
]);

const functionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, underscores or dashes'),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});
const customTool = z.looseObject({ type: z.literal('custom'), custom: z.looseObject({ name: z.string() }) });

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
  z.looseObject({ type: z.literal('custom'), custom: z.looseObject({ name: z.string() }) }),
  z.looseObject({
    type: z.literal('allowed_tools'),
    allowed_tools: z.looseObject({ mode: z.enum(['auto', 'required']), tools: z.array(z.looseObject({ type: z.string() })) }),
  }),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string(),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullish(),
    }),
  }),
]);

const penalty = z.number().min(-2).max(2).nullish();

export const chatBody = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  n: z.number().int().min(1).max(N_MAX).nullish(),
  stop: z.union([z.string(), z.array(z.string()).min(1).max(STOP_MAX)]).nullish(),
  presence_penalty: penalty,
  frequency_penalty: penalty,
  seed: z.number().int().nullish(),
  logit_bias: z.record(z.string().regex(/^\d+$/, 'keys must be token ids'), z.number().int().min(-100).max(100)).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(TOP_LOGPROBS_MAX).nullish(),
  tools: z
    .array(z.discriminatedUnion('type', [functionTool, customTool]))
    .max(TOOLS_MAX)
    .optional(),
  tool_choice: toolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: responseFormat.optional(),
  user: z.string().optional(),
  safety_identifier: z.string().max(64).nullish(),
  metadata,
});

const tokens = z.array(z.number().int().min(0)).min(1);

export const embeddingsBody = z.looseObject({
  model: z.string().min(1),
  input: z.union([
    z.string(),
    z.array(z.string()).min(1).max(EMBEDDING_INPUTS_MAX),
    tokens.max(EMBEDDING_INPUTS_MAX),
    z.array(tokens).min(1).max(EMBEDDING_INPUTS_MAX),
  ]),
  dimensions: z.number().int().min(1).max(EMBEDDING_DIMENSIONS_MAX).optional(),
  encoding_format: z.enum(['float', 'base64']).optional(),
  user: z.string().optional(),
  metadata,
});

export type ChatBody = z.infer<typeof chatBody>;
export type EmbeddingsBody = z.infer<typeof embeddingsBody>;
