// Request body of POST /v1/responses: the fields the gateway relies on are checked, the rest is read by the
// translators (which refuse what they cannot carry, naming the field) or passed through untouched.
import { z } from 'zod';
import { TOOLS_MAX, TOP_LOGPROBS_MAX } from './openai-schemas.ts';

const metadata = z.looseObject({ task_type: z.string().optional() }).nullish();

const inputItem = z.looseObject({ type: z.string().optional(), role: z.string().optional() });

export const responsesBody = z
  .looseObject({
    model: z.string().min(1),
    input: z.union([z.string(), z.array(inputItem)]).optional(),
    instructions: z.string().nullish(),
    stream: z.boolean().nullish(),
    max_output_tokens: z.number().int().positive().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_logprobs: z.number().int().min(0).max(TOP_LOGPROBS_MAX).nullish(),
    max_tool_calls: z.number().int().positive().nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    tools: z
      .array(z.looseObject({ type: z.string() }))
      .max(TOOLS_MAX)
      .nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    store: z.boolean().nullish(),
    background: z.boolean().nullish(),
    previous_response_id: z.string().nullish(),
    metadata,
  })
  .refine((b) => b.input !== undefined, { message: 'input is required (with previous_response_id, only the new input)', path: ['input'] });

export type ResponsesBody = z.infer<typeof responsesBody>;
