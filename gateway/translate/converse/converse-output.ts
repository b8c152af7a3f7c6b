// A Converse answer as an Anthropic message: the two are close (content blocks, the same stop reasons), so each
// client dialect gets its answer from this one shape (Anthropic clients as it is, OpenAI Chat through toCompletion,
// Responses through Chat). Converse gives an answer no id: the gateway makes one.
import { randomBytes } from 'node:crypto';
import { converseToAnthropicUsage, fromConverseUsage, type ConverseUsage } from './converse-usage.ts';
import { isObject, type Json } from '../json-read.ts';
import type { StopReason } from '../stop-reasons.ts';
import type { Usage } from '../types.ts';

/** A fresh Anthropic-style message id for an answer Converse gave no id. */
export function converseMessageId(): string {
  return `msg_bdrk_${randomBytes(12).toString('hex')}`;
}

/**
 * Converse stopReason -> Anthropic stop_reason. A guardrail or a content filter that stopped the answer is a
 * refusal (content_filter for OpenAI clients).
 */
export function stopReasonOfConverse(stop: unknown): StopReason {
  switch (stop) {
    case 'max_tokens':
    case 'stop_sequence':
    case 'tool_use':
    case 'model_context_window_exceeded':
      return stop;
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Converse says a stop sequence ended the answer, not which: when the client gave one, it was that one. */
export function stopSequenceOf(stop: StopReason, stopSequences: readonly string[]): string | null {
  return stop === 'stop_sequence' && stopSequences.length === 1 ? (stopSequences[0] ?? null) : null;
}

/** Converse reasoningContent -> an Anthropic thinking (or redacted_thinking) block. */
function thinkingBlock(r: Json): Json | null {
  if (typeof r.redactedContent === 'string') return { type: 'redacted_thinking', data: r.redactedContent };
  const t = isObject(r.reasoningText) ? r.reasoningText : null;
  if (!t) return null;
  return { type: 'thinking', thinking: typeof t.text === 'string' ? t.text : '', signature: typeof t.signature === 'string' ? t.signature : '' };
}

/** Content blocks of `output.message`: text, toolUse and reasoningContent; other kinds (citations, images) left out. */
function contentOf(message: Json): Json[] {
  const out: Json[] = [];
  for (const b of Array.isArray(message.content) ? message.content.filter(isObject) : []) {
    if (typeof b.text === 'string') out.push({ type: 'text', text: b.text });
    else if (isObject(b.toolUse)) {
      const u = b.toolUse;
      out.push({ type: 'tool_use', id: String(u.toolUseId ?? ''), name: String(u.name ?? ''), input: isObject(u.input) ? u.input : {} });
    } else if (isObject(b.reasoningContent)) {
      const t = thinkingBlock(b.reasoningContent);
      if (t) out.push(t);
    }
  }
  return out;
}

/** A Converse answer `{output: {message}, stopReason, usage}` -> an Anthropic message and our usage. */
export function anthropicMessageOfConverse(
  answer: Json,
  servedModel: string,
  id: string,
  stopSequences: readonly string[] = [],
): { message: Json; usage: Usage } {
  const output = isObject(answer.output) && isObject(answer.output.message) ? answer.output.message : {};
  const u = answer.usage as ConverseUsage | undefined;
  const usage = fromConverseUsage(u);
  const stop = stopReasonOfConverse(answer.stopReason);
  const content = contentOf(output);
  const wire = converseToAnthropicUsage(u);
  return {
    usage,
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: servedModel,
      content: content.length > 0 ? content : [{ type: 'text', text: '' }],
      stop_reason: stop,
      stop_sequence: stopSequenceOf(stop, stopSequences),
      usage: { input_tokens: wire.input_tokens ?? 0, ...wire, output_tokens: wire.output_tokens ?? 0 },
    },
  };
}
