// Request bodies of /v1/completions (OpenAI's CreateCompletionRequest), /v1/rerank (the shape Cohere v2, Jina and
// vLLM share) and /v1/moderations (CreateModerationRequest): every field the gateway reads or an upstream bills by is
// checked for type and range, so a mistake is a 400 naming the field; the rest passes through untouched.
import { z } from 'zod';
import { N_MAX, STOP_MAX } from './openai-schemas.ts';

const metadata = z.looseObject({ task_type: z.string().optional() }).nullish();
const penalty = z.number().min(-2).max(2).nullish();
const tokens = z.array(z.number().int().min(0)).min(1);

/** OpenAI's bounds on legacy completions: candidates per call (best_of) and log probabilities per token. */
export const BEST_OF_MAX = 20;
export const COMPLETION_LOGPROBS_MAX = 5;
/** Documents per rerank call (Cohere's and Voyage's limit). */
export const RERANK_DOCUMENTS_MAX = 1000;
/** The model a moderation call without one gets: OpenAI's default. */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

export const completionsBody = z
  .looseObject({
    model: z.string().min(1),
    prompt: z.union([z.string(), z.array(z.string()).min(1), tokens, z.array(tokens).min(1)]),
    suffix: z.string().nullish(),
    echo: z.boolean().nullish(),
    logprobs: z.number().int().min(0).max(COMPLETION_LOGPROBS_MAX).nullish(),
    n: z.number().int().min(1).max(N_MAX).nullish(),
    best_of: z.number().int().min(1).max(BEST_OF_MAX).nullish(),
    stop: z.union([z.string(), z.array(z.string()).min(1).max(STOP_MAX)]).nullish(),
    max_tokens: z.number().int().min(0).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    presence_penalty: penalty,
    frequency_penalty: penalty,
    seed: z.number().int().nullish(),
    logit_bias: z.record(z.string().regex(/^\d+$/, 'keys must be token ids'), z.number().int().min(-100).max(100)).nullish(),
    user: z.string().optional(),
    metadata,
  })
  .refine((b) => b.best_of === null || b.best_of === undefined || b.best_of >= (b.n ?? 1), { message: 'best_of must be at least n', path: ['best_of'] })
  .refine((b) => !(b.stream === true && (b.best_of ?? 1) > 1), { message: 'best_of above 1 cannot be streamed', path: ['best_of'] });

const rerankDocument = z.union([z.string(), z.looseObject({ text: z.string() })]);

export const rerankBody = z.looseObject({
  model: z.string().min(1),
  query: z.string().refine((q) => q.trim() !== '', 'must not be empty'),
  documents: z.array(rerankDocument).min(1).max(RERANK_DOCUMENTS_MAX),
  top_n: z.number().int().min(1).nullish(),
  return_documents: z.boolean().nullish(),
  max_tokens_per_doc: z.number().int().min(1).nullish(),
  metadata,
});

const moderationPart = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({ type: z.literal('image_url'), image_url: z.looseObject({ url: z.string().min(1) }) }),
]);

export const moderationsBody = z.looseObject({
  model: z.string().min(1).default(DEFAULT_MODERATION_MODEL),
  input: z.union([z.string(), z.array(z.string()).min(1), z.array(moderationPart).min(1)]),
  metadata,
});

export type CompletionsBody = z.infer<typeof completionsBody>;
export type RerankBody = z.infer<typeof rerankBody>;
export type ModerationsBody = z.infer<typeof moderationsBody>;
