// Anthropic client -> Gemini upstream (Vertex AI and the Gemini API). The request mapping is in
// anthropic-gemini-request.ts, the stream in anthropic-gemini-stream.ts. The answer's text and function calls become
// text and tool_use blocks; finishReason -> stop_reason (STOP -> end_turn, or tool_use when the answer holds calls;
// MAX_TOKENS -> max_tokens; the filters and a blocked prompt -> refusal, an answer rather than an error). Gemini
// does not say whether a stop sequence fired: end_turn.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { toGeminiFromMessages } from './anthropic-gemini-request.ts';
import { AnthropicFromGeminiStream } from './anthropic-gemini-stream.ts';
import { toAnthropicUsage } from './anthropic-usage.ts';
import { finishOf, geminiMessageId, readChunk } from '../gemini/gemini-answer.ts';
import { fromGeminiUsage, geminiErrorMessage, type GeminiUsage } from '../gemini/gemini-usage.ts';
import { isObject, parseUpstream, type Json } from '../json-read.ts';
import { stopReasonOf } from '../stop-reasons.ts';
import type { Translation, UpstreamRequest, Usage } from '../types.ts';

export function messageOfGemini(r: Json, servedModel: string): { message: Json; usage: Usage } {
  const chunk = readChunk(r);
  const content: Json[] = [];
  for (const p of chunk.parts) {
    if (p.kind === 'call') content.push({ type: 'tool_use', id: p.id, name: p.name, input: p.args });
    else if (content.at(-1)?.type === 'text') content.at(-1)!.text = `${String(content.at(-1)!.text)}${p.text}`;
    else content.push({ type: 'text', text: p.text });
  }
  if (content.length === 0) content.push({ type: 'text', text: '' }); // as the stream's one empty text block
  const hasCalls = content.some((b) => b.type === 'tool_use');
  const usage = fromGeminiUsage(isObject(r.usageMetadata) ? (r.usageMetadata as GeminiUsage) : undefined);
  return {
    usage,
    message: {
      id: geminiMessageId(r.responseId),
      type: 'message',
      role: 'assistant',
      model: servedModel,
      content,
      stop_reason: stopReasonOf(finishOf(chunk.finish, chunk.blocked, hasCalls)),
      stop_sequence: null,
      usage: toAnthropicUsage(usage),
    },
  };
}

export function anthropicFromGemini(client: Json): Translation {
  return {
    dialect: 'anthropic',
    protocol: 'gemini',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      return { operation: 'chat', body: JSON.stringify(toGeminiFromMessages(client, target, model)), stream: client.stream === true, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      const { message, usage } = messageOfGemini(parseUpstream(upstreamBody), servedModel);
      return { body: JSON.stringify(message), usage };
    },
    stream: (servedModel: string) => new AnthropicFromGeminiStream(servedModel),
    errorMessage: geminiErrorMessage,
  };
}
