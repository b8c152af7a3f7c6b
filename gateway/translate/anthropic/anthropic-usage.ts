// Anthropic usage <-> ours. Anthropic's input_tokens exclude cache reads and writes; ours include them
// (what the input price applies to), so each token is counted exactly once in either direction.
import { safeJson, tokenCount, type Usage } from '../types.ts';

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

export function fromAnthropicUsage(u: AnthropicUsage | null | undefined): Usage {
  const read = num(u?.cache_read_input_tokens);
  const write = num(u?.cache_creation_input_tokens);
  const input = tokenCount(u?.input_tokens);
  const output = tokenCount(u?.output_tokens);
  const out: Usage = { inputTokens: (input ?? 0) + read + write, outputTokens: output ?? 0, cacheReadTokens: read, cacheWriteTokens: write };
  if (input === null) out.inputMissing = true;
  if (output === null) out.outputMissing = true;
  return out;
}

/** Merges a later usage report (message_delta) into an earlier one (message_start): present fields win. */
export function mergeAnthropicUsage(a: AnthropicUsage, b: AnthropicUsage | null | undefined): AnthropicUsage {
  const out: AnthropicUsage = { ...a };
  if (!b) return out;
  for (const k of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
    if (typeof b[k] === 'number') out[k] = b[k];
  }
  return out;
}

/**
 * Usage of an Anthropic stream so far. Until message_delta reports the output, each content delta seen counts as
 * at least one output token, so a stream cut mid-answer is not billed as the single token of message_start.
 */
export class AnthropicStreamUsage {
  private seen: AnthropicUsage = {};
  private deltas = 0;
  private final = false;

  start(u: AnthropicUsage | null | undefined): void {
    this.seen = mergeAnthropicUsage(this.seen, u);
  }

  delta(): void {
    this.deltas++;
  }

  end(u: AnthropicUsage | null | undefined): void {
    this.seen = mergeAnthropicUsage(this.seen, u);
    this.final = true;
  }

  usage(): Usage {
    const u = fromAnthropicUsage(this.seen);
    return this.final ? u : { ...u, outputTokens: Math.max(u.outputTokens, this.deltas) };
  }
}

/** Our usage in Anthropic's fields: input_tokens without the cache tokens. */
export function toAnthropicUsage(u: Usage): Required<AnthropicUsage> {
  return {
    input_tokens: Math.max(0, u.inputTokens - u.cacheReadTokens - u.cacheWriteTokens),
    cache_creation_input_tokens: u.cacheWriteTokens,
    cache_read_input_tokens: u.cacheReadTokens,
    output_tokens: u.outputTokens,
  };
}

export function anthropicErrorMessage(body: string, status: number): string {
  const e = (safeJson(body) as { error?: { message?: unknown } } | undefined)?.error;
  if (typeof e?.message === 'string') return `upstream answered ${status}: ${e.message.slice(0, 500)}`;
  return `upstream answered ${status}`;
}
