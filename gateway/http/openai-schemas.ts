// Request bodies of the OpenAI-compatible endpoints: the fields the gateway relies on are checked, the rest
// passes through to the upstream untouched.
import { z } from 'zod';

export const TASK_TYPE_MAX = 64;

const metadata = z.looseObject({ task_type: z.string().optional() }).nullish();

const message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
});

export const chatBody = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  metadata,
});

export const embeddingsBody = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.string()).min(1), z.array(z.number().int()).min(1), z.array(z.array(z.number().int()).min(1)).min(1)]),
  dimensions: z.number().int().positive().optional(),
  encoding_format: z.enum(['float', 'base64']).optional(),
  metadata,
});

export type ChatBody = z.infer<typeof chatBody>;
export type EmbeddingsBody = z.infer<typeof embeddingsBody>;
