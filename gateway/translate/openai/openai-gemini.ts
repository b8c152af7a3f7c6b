// OpenAI client -> Gemini upstream (Vertex AI and the Gemini API). The request mapping is in
// openai-gemini-request.ts, the stream in openai-gemini-stream.ts, the reading of Gemini's answer in
// gemini-answer.ts. A prompt Gemini blocked (promptFeedback.blockReason, no candidate) is answered as what it is:
// an empty answer with finish_reason content_filter, not an error, so it is never retried on another target.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { finishOf, geminiCompletionId, readChunk } from '../gemini/gemini-answer.ts';
import { fromGeminiUsage, geminiErrorMessage, type GeminiUsage } from '../gemini/gemini-usage.ts';
import { isObject, parseUpstream, type Json } from '../json-read.ts';
import { toGeminiFromChat } from './openai-gemini-request.ts';
import { OpenAIFromGeminiStream } from './openai-gemini-stream.ts';
import { toOpenAIUsage } from './openai-usage.ts';
import type { Translation, UpstreamRequest, Usage } from '../types.ts';

/** A Gemini GenerateContentResponse -> a chat.completion and its usage. */
export function completionOfGemini(r: Json, servedModel: string, created: number): { completion: Json; usage: Usage } {
  const chunk = readChunk(r);
  const texts: string[] = [];
  const calls: Json[] = [];
  for (const p of chunk.parts) {
    if (p.kind === 'text') texts.push(p.text);
    else calls.push({ id: p.id, type: 'function', function: { name: p.name, arguments: JSON.stringify(p.args) } });
  }
  const message: Json = { role: 'assistant', content: texts.length > 0 || calls.length === 0 ? texts.join('') : null, refusal: null };
  if (calls.length > 0) message.tool_calls = calls;
  const usage = fromGeminiUsage(isObject(r.usageMetadata) ? (r.usageMetadata as GeminiUsage) : undefined);
  return {
    usage,
    completion: {
      id: geminiCompletionId(r.responseId),
      object: 'chat.completion',
      created,
      model: servedModel,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishOf(chunk.finish, chunk.blocked, calls.length > 0) }],
      usage: toOpenAIUsage(usage),
    },
  };
}

export function openAIFromGemini(client: Json, now: () => number = Date.now): Translation {
  const wantsUsage = isObject(client.stream_options) && client.stream_options.include_usage === true;
  return {
    dialect: 'openai',
    protocol: 'gemini',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      const body = toGeminiFromChat(client, target, model);
      return { operation: 'chat', body: JSON.stringify(body), stream: client.stream === true, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      const { completion, usage } = completionOfGemini(parseUpstream(upstreamBody), servedModel, Math.floor(now() / 1000));
      return { body: JSON.stringify(completion), usage };
    },
    stream: (servedModel: string) => new OpenAIFromGeminiStream(servedModel, wantsUsage, Math.floor(now() / 1000)),
    errorMessage: geminiErrorMessage,
  };
}
