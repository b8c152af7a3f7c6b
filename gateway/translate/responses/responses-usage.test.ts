// Responses usage as OpenAI's description requires it, every detail filled with what the upstream reported (0 when
// it reported nothing of that kind): cache reads and writes in, reasoning out, from a Chat or a Responses upstream.
import { describe, expect, it } from 'vitest';
import { fromAnthropicUsage } from '../anthropic/anthropic-usage.ts';
import { fromOpenAIUsage } from '../openai/openai-usage.ts';
import { fromResponsesUsage, toResponsesUsage } from './responses-usage.ts';

describe('Responses usage details', () => {
  it('carries what a Chat upstream reported: cached, cache writes, reasoning', () => {
    const u = fromOpenAIUsage({
      prompt_tokens: 100,
      completion_tokens: 40,
      prompt_tokens_details: { cached_tokens: 30, cache_write_tokens: 20 },
      completion_tokens_details: { reasoning_tokens: 25 },
    });
    expect(toResponsesUsage(u)).toEqual({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 30, cache_write_tokens: 20 },
      output_tokens: 40,
      output_tokens_details: { reasoning_tokens: 25 },
      total_tokens: 140,
    });
  });

  it('carries Anthropic cache writes, and 0 for what nobody reported', () => {
    const u = fromAnthropicUsage({ input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 7, output_tokens: 3 });
    expect(toResponsesUsage(u)).toMatchObject({
      input_tokens: 22,
      input_tokens_details: { cached_tokens: 5, cache_write_tokens: 7 },
      output_tokens_details: { reasoning_tokens: 0 },
    });
    expect(toResponsesUsage(fromOpenAIUsage({ prompt_tokens: 1, completion_tokens: 1 }))).toMatchObject({
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('reads a Responses upstream the same way (round trip)', () => {
    const wire = {
      input_tokens: 50,
      input_tokens_details: { cached_tokens: 10, cache_write_tokens: 4 },
      output_tokens: 9,
      output_tokens_details: { reasoning_tokens: 6 },
      total_tokens: 59,
    };
    expect(toResponsesUsage(fromResponsesUsage(wire))).toEqual(wire);
  });
});
