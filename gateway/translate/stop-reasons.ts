// Why generation stopped, between the two protocols.
export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** OpenAI finish_reason -> Anthropic stop_reason. OpenAI does not say whether a stop sequence fired: end_turn. */
export function stopReasonOf(finish: unknown): StopReason {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Anthropic stop_reason -> OpenAI finish_reason. */
export function finishReasonOf(stop: unknown): FinishReason {
  switch (stop) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}
