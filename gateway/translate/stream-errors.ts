// The error event the gateway itself writes to end a stream, in each dialect, with the catalog's code and types:
// upstream_stream_error when the upstream failed mid-stream, shutting_down when a drain ended the call.
import { errorBody } from '../errors/catalog.ts';
import { anthropicEvent } from './anthropic/anthropic-sse.ts';
import type { StreamErrorCode } from './types.ts';

export function openAIStreamError(message: string, code: StreamErrorCode = 'upstream_stream_error'): string {
  return `data: ${JSON.stringify(errorBody('openai', code, message))}\n\n`;
}

export function anthropicStreamError(message: string, code: StreamErrorCode = 'upstream_stream_error'): string {
  return anthropicEvent('error', errorBody('anthropic', code, message) as object);
}
