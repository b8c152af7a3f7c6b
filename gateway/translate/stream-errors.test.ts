import { describe, expect, it } from 'vitest';
import { anthropicStreamError, openAIStreamError } from './stream-errors.ts';

describe('the error event the gateway writes to end a stream', () => {
  it('names the upstream failure or the shutdown, in the OpenAI shape', () => {
    expect(JSON.parse(openAIStreamError('cut').slice('data: '.length))).toEqual({
      error: { message: 'cut', type: 'api_error', param: null, code: 'upstream_stream_error' },
    });
    expect(JSON.parse(openAIStreamError('bye', 'shutting_down').slice('data: '.length)).error.code).toBe('shutting_down');
  });

  it('uses the Anthropic error types: api_error for a failed upstream, overloaded_error for a shutdown', () => {
    const data = (e: string): unknown => JSON.parse(e.split('\n')[1]?.slice('data: '.length) ?? '');
    expect(anthropicStreamError('cut').startsWith('event: error\n')).toBe(true);
    expect(data(anthropicStreamError('cut'))).toEqual({ type: 'error', error: { type: 'api_error', message: 'cut' } });
    expect(data(anthropicStreamError('bye', 'shutting_down'))).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'bye' } });
  });
});
