import { tokenCount, type Usage } from '../types.ts';

interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/** OpenAI usage -> ours. OpenAI's prompt_tokens already include cached tokens: counted once. */
export function fromOpenAIUsage(u: OpenAIUsage | null | undefined): Usage {
  const input = tokenCount(u?.prompt_tokens);
  const output = tokenCount(u?.completion_tokens);
  const out: Usage = {
    inputTokens: input ?? 0,
    outputTokens: output ?? 0,
    cacheReadTokens: num(u?.prompt_tokens_details?.cached_tokens),
    cacheWriteTokens: num(u?.prompt_tokens_details?.cache_write_tokens),
    ...reasoning(num(u?.completion_tokens_details?.reasoning_tokens)),
  };
  if (input === null) out.inputMissing = true;
  if (output === null) out.outputMissing = true;
  return out;
}

/** Set only when reported, so a usage without reasoning compares as before. */
export function reasoning(tokens: number): { reasoningTokens?: number } {
  return tokens > 0 ? { reasoningTokens: tokens } : {};
}

/**
 * Our usage in OpenAI's fields: prompt_tokens include cached tokens, as OpenAI counts them. Cache writes (which
 * Anthropic reports) go in prompt_tokens_details.cache_write_tokens, a field of OpenAI's description, when there are any.
 */
export function toOpenAIUsage(u: Usage): {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  completion_tokens_details?: { reasoning_tokens: number };
} {
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cacheReadTokens, ...(u.cacheWriteTokens > 0 ? { cache_write_tokens: u.cacheWriteTokens } : {}) },
    // Reasoning tokens (part of completion_tokens) when the upstream reported them (Gemini's thoughtsTokenCount).
    ...(u.reasoningTokens !== undefined && u.reasoningTokens > 0 ? { completion_tokens_details: { reasoning_tokens: u.reasoningTokens } } : {}),
  };
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

export function openAIErrorMessage(body: string, status: number): string {
  try {
    const e = (JSON.parse(body) as { error?: { message?: unknown } }).error;
    if (typeof e?.message === 'string') return `upstream answered ${status}: ${e.message.slice(0, 500)}`;
  } catch {
    /* not JSON */
  }
  return `upstream answered ${status}`;
}
