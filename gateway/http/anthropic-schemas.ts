// Request bodies of the Anthropic-compatible endpoints: the top-level fields the gateway relies on (thinking
// included) are checked as Anthropic checks them, in its words where a client most often meets them; blocks are
// checked by type here and field by field by the translators. The rest passes through to an Anthropic upstream
// untouched.
import { z } from 'zod';

const metadata = z.looseObject({ task_type: z.string().optional(), user_id: z.string().nullish() }).nullish();
const block = z.looseObject({ type: z.string() });
// Anthropic's own words for the refusals a client most often meets (the rest keep zod's wording).
const SYSTEM_ROLE = 'Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.';
const NOT_OBJECT = 'Input should be a valid dictionary or object to extract fields from';
export const THINKING_BUDGET_MIN = 1024;

const message = z.looseObject({
  role: z.enum(['user', 'assistant'], { error: (iss) => (iss.input === 'system' ? SYSTEM_ROLE : "Input should be 'user' or 'assistant'") }),
  content: z.union([z.string(), z.array(block)]),
});
// Extended thinking: enabled with a budget of at least 1024 tokens (below max_tokens), disabled, or adaptive.
const thinking = z.discriminatedUnion(
  'type',
  [
    z.looseObject({
      type: z.literal('enabled'),
      budget_tokens: z
        .number({ error: 'Input should be a valid integer' })
        .int('Input should be a valid integer')
        .min(THINKING_BUDGET_MIN, `Input should be greater than or equal to ${THINKING_BUDGET_MIN}`),
    }),
    z.looseObject({ type: z.literal('disabled') }),
    z.looseObject({ type: z.literal('adaptive') }),
  ],
  {
    error: (iss) => {
      const input = iss.input;
      if (input === null || typeof input !== 'object' || Array.isArray(input)) return NOT_OBJECT;
      const tag = (input as { type?: unknown }).type;
      return tag === undefined
        ? "Unable to extract tag using discriminator 'type'"
        : "Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'";
    },
  },
);
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

export const messagesBody = z
  .looseObject({
    ...shared,
    max_tokens: z.number().int().min(1),
    stream: z.boolean().optional(),
    stop_sequences: z.array(z.string()).optional(),
    temperature: unit.optional(),
    top_p: unit.optional(),
    top_k: z.number().int().min(0).optional(),
    thinking: thinking.optional(),
  })
  .refine((b) => b.thinking?.type !== 'enabled' || b.max_tokens > b.thinking.budget_tokens, {
    message: '`max_tokens` must be greater than `thinking.budget_tokens`',
  });

export const countTokensBody = z.looseObject({ ...shared, thinking: thinking.optional() });

export const modelsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(20),
  after_id: z.string().optional(),
  before_id: z.string().optional(),
});

export type MessagesBody = z.infer<typeof messagesBody>;
export type CountTokensBody = z.infer<typeof countTokensBody>;
