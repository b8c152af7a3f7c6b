import { describe, expect, it } from 'vitest';
import { fromAnthropicUsage } from './anthropic/anthropic-usage.ts';
import { fromOpenAIUsage } from './openai/openai-usage.ts';
import { fromResponsesUsage } from './responses/responses-usage.ts';

// What an upstream may put where a token count belongs; only whole non-negative numbers are counts.
const BAD: unknown[] = [undefined, null, -5, '12', 0.5, 3.5, Infinity, Number.NaN, {}, true];

describe('usage reports: a count that is not a whole non-negative number is flagged missing, never read as 0', () => {
  it.each(BAD)('%s', (v) => {
    const read = [
      fromOpenAIUsage({ prompt_tokens: v, completion_tokens: v } as never),
      fromResponsesUsage({ input_tokens: v, output_tokens: v } as never),
      fromAnthropicUsage({ input_tokens: v, output_tokens: v } as never),
    ];
    for (const u of read) expect(u).toMatchObject({ inputTokens: 0, outputTokens: 0, inputMissing: true, outputMissing: true });
  });

  it('reads 0, 1 and large whole numbers as they are (bounds are applied at settlement)', () => {
    for (const n of [0, 1, 1e15]) {
      const u = fromOpenAIUsage({ prompt_tokens: n, completion_tokens: n });
      expect(u).toEqual({ inputTokens: n, outputTokens: n, cacheReadTokens: 0, cacheWriteTokens: 0 });
    }
    expect(fromAnthropicUsage({ input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 5 })).toEqual({
      inputTokens: 8,
      outputTokens: 2,
      cacheReadTokens: 5,
      cacheWriteTokens: 0,
    });
    expect(fromOpenAIUsage(undefined)).toMatchObject({ inputMissing: true, outputMissing: true });
  });
});
