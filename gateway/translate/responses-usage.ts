// Responses API usage <-> ours. Like Chat Completions, input_tokens already include the cached tokens, so each
// token is counted once.
import type { Usage } from './types.ts';

export interface ResponsesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  input_tokens_details?: { cached_tokens?: number | null } | null;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

export function fromResponsesUsage(u: ResponsesUsage | null | undefined): Usage {
  return {
    inputTokens: num(u?.input_tokens),
    outputTokens: num(u?.output_tokens),
    cacheReadTokens: num(u?.input_tokens_details?.cached_tokens),
    cacheWriteTokens: 0,
  };
}

export function toResponsesUsage(u: Usage): object {
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cacheReadTokens },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}
