// Bedrock Converse usage <-> ours, and Converse error bodies. Converse's inputTokens exclude the cache reads and
// writes it reports beside them (cacheReadInputTokens, cacheWriteInputTokens), as Anthropic's input_tokens do; ours
// include them (what the input price applies to). Reasoning tokens are part of outputTokens (Converse does not
// report them apart).
import type { AnthropicUsage } from '../anthropic/anthropic-usage.ts';
import { safeJson, tokenCount, type Usage } from '../types.ts';

export interface ConverseUsage {
  inputTokens?: unknown;
  outputTokens?: unknown;
  cacheReadInputTokens?: unknown;
  cacheWriteInputTokens?: unknown;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

export function fromConverseUsage(u: ConverseUsage | null | undefined): Usage {
  const read = num(u?.cacheReadInputTokens);
  const write = num(u?.cacheWriteInputTokens);
  const input = tokenCount(u?.inputTokens);
  const output = tokenCount(u?.outputTokens);
  const out: Usage = { inputTokens: (input ?? 0) + read + write, outputTokens: output ?? 0, cacheReadTokens: read, cacheWriteTokens: write };
  if (input === null) out.inputMissing = true;
  if (output === null) out.outputMissing = true;
  return out;
}

/** Converse usage in Anthropic's fields (the same split: input_tokens without the cache tokens); unreadable counts left out. */
export function converseToAnthropicUsage(u: ConverseUsage | null | undefined): AnthropicUsage {
  const out: AnthropicUsage = {};
  const input = tokenCount(u?.inputTokens);
  const output = tokenCount(u?.outputTokens);
  if (input !== null) out.input_tokens = input;
  if (output !== null) out.output_tokens = output;
  out.cache_read_input_tokens = num(u?.cacheReadInputTokens);
  out.cache_creation_input_tokens = num(u?.cacheWriteInputTokens);
  return out;
}

/**
 * Usage of a Converse stream so far: the final `metadata` event reports it. Until then input is unknown and each
 * content delta counts as at least one output token, both flagged missing so a cut stream is charged the estimate.
 */
export class ConverseStreamUsage {
  private final: Usage | null = null;
  private deltas = 0;

  delta(): void {
    this.deltas++;
  }

  end(u: ConverseUsage | null | undefined): void {
    this.final = fromConverseUsage(u);
  }

  get reported(): boolean {
    return this.final !== null;
  }

  usage(): Usage {
    if (this.final) return this.final;
    return { inputTokens: 0, outputTokens: this.deltas, cacheReadTokens: 0, cacheWriteTokens: 0, inputMissing: true, outputMissing: true };
  }
}

/**
 * The message of a Bedrock error body: `{"message": "..."}` (or `Message`), the exception named by `__type`
 * (`ValidationException`, or a namespaced `com.amazon...#ValidationException`) when it is there.
 */
export function converseErrorMessage(body: string, status: number): string {
  const e = safeJson(body) as { message?: unknown; Message?: unknown; __type?: unknown } | undefined;
  const message = typeof e?.message === 'string' ? e.message : typeof e?.Message === 'string' ? e.Message : null;
  if (message === null) return `upstream answered ${status}`;
  const type = typeof e?.__type === 'string' ? (e.__type.split('#').at(-1) ?? '').replace(/[^A-Za-z0-9]/g, '') : '';
  return `upstream answered ${status}: ${type ? `${type}: ` : ''}${message.slice(0, 500)}`;
}
