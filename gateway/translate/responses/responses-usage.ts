// Responses API usage <-> ours. Like Chat Completions, input_tokens already include the cached tokens (read and
// written), so each token is counted once. OpenAI's description requires every detail field: each is filled with
// what the upstream reported, 0 when it reported nothing of that kind.
import { reasoning } from '../openai/openai-usage.ts';
import { tokenCount, type Usage } from '../types.ts';

export interface ResponsesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  input_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  output_tokens_details?: { reasoning_tokens?: number | null } | null;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

export function fromResponsesUsage(u: ResponsesUsage | null | undefined): Usage {
  const input = tokenCount(u?.input_tokens);
  const output = tokenCount(u?.output_tokens);
  const out: Usage = {
    inputTokens: input ?? 0,
    outputTokens: output ?? 0,
    cacheReadTokens: num(u?.input_tokens_details?.cached_tokens),
    cacheWriteTokens: num(u?.input_tokens_details?.cache_write_tokens),
    ...reasoning(num(u?.output_tokens_details?.reasoning_tokens)),
  };
  if (input === null) out.inputMissing = true;
  if (output === null) out.outputMissing = true;
  return out;
}

export function toResponsesUsage(u: Usage): object {
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cacheReadTokens, cache_write_tokens: u.cacheWriteTokens },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}
