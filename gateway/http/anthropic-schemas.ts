// Request bodies of the Anthropic-compatible endpoints: the top-level fields the gateway relies on are checked as
// Anthropic checks them; blocks are checked by type here and field by field by the translators. The rest passes
// through to an Anthropic upstream untouched.
import { z } from 'zod';

const metadata = z.looseObject({ task_type: z.string().optional(), user_id: z.string().nullish() }).nullish();
const block = z.looseObject({ type: z.string() });
const message = z.looseObject({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(block)]),
});
const system = z.union([z.string(), z.array(z.looseObject({ type: z.literal('text'), text: z.string() }))]);
const tool = z.looseObject({ name: z.string().min(1), type: z.string().nullish() });
const toolChoice = z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']), name: z.string().min(1).optional() });
const unit = z.number().min(0).max(1);

const shared = {
  model: z.string().min(1),
  messages: z.array(message).min(1),
  system: system.optional(),
  tools: z.array(tool).optional(),
  tool_choice: toolChoice.optional(),
  metadata,
};

export const messagesBody = z.looseObject({
  ...shared,
  max_tokens: z.number().int().min(1),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string()).optional(),
  temperature: unit.optional(),
  top_p: unit.optional(),
  top_k: z.number().int().min(0).optional(),
});

export const countTokensBody = z.looseObject(shared);

export const modelsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(20),
  after_id: z.string().optional(),
  before_id: z.string().optional(),
});

export type MessagesBody = z.infer<typeof messagesBody>;
export type CountTokensBody = z.infer<typeof countTokensBody>;
