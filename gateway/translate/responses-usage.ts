// Responses API usage <-> ours. Like Chat Completions, input_tokens already include the cached tokens, so each
// token is counted once.
import { tokenCount, type Usage } from './types.ts';

export interface ResponsesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  input_tokens_details?: { cached_tokens?: number | null } | null;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

export function fromResponsesUsage(u: ResponsesUsage | null | undefined): Usage {
  const input = tokenCount(u?.input_tokens);
  const output = tokenCount(u?.output_tokens);
  const out: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0, cacheReadTokens: num(u?.input_tokens_details?.cached_tokens), cacheWriteTokens: 0 };
  if (input === null) out.inputMissing = true;
  if (output === null) out.outputMissing = true;
  return out;
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
