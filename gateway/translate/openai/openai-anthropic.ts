// OpenAI client -> Anthropic upstream. The request mapping is in openai-anthropic-request.ts, the stream in
// openai-anthropic-stream.ts. Thinking blocks in an answer are not passed on (Chat Completions has no field for
// them); text and tool_use blocks are.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { anthropicErrorMessage, fromAnthropicUsage, type AnthropicUsage } from '../anthropic/anthropic-usage.ts';
import { messageFacts } from '../answer-facts.ts';
import { completionId } from '../ids.ts';
import { isObject, parseUpstream, type Json } from '../json-read.ts';
import { toAnthropicMessages } from './openai-anthropic-request.ts';
import { toOpenAIUsage } from './openai-usage.ts';
import { OpenAIFromAnthropicStream } from './openai-anthropic-stream.ts';
import { finishReasonOf } from '../stop-reasons.ts';
import type { Translation, UpstreamRequest, Usage } from '../types.ts';

export function toCompletion(message: Json, servedModel: string, created: number): { completion: Json; usage: Usage } {
  const texts: string[] = [];
  const calls: Json[] = [];
  for (const b of Array.isArray(message.content) ? message.content.filter(isObject) : []) {
    if (b.type === 'text' && typeof b.text === 'string') texts.push(b.text);
    if (b.type === 'tool_use') {
      calls.push({ id: String(b.id ?? ''), type: 'function', function: { name: String(b.name ?? ''), arguments: JSON.stringify(b.input ?? {}) } });
    }
  }
  const out: Json = { role: 'assistant', content: texts.length > 0 || calls.length === 0 ? texts.join('') : null, refusal: null };
  if (calls.length > 0) out.tool_calls = calls;
  const usage = fromAnthropicUsage(message.usage as AnthropicUsage | undefined);
  return {
    usage,
    completion: {
      id: completionId(message.id),
      object: 'chat.completion',
      created,
      model: servedModel,
      choices: [{ index: 0, message: out, logprobs: null, finish_reason: finishReasonOf(message.stop_reason) }],
      usage: toOpenAIUsage(usage),
    },
  };
}

export function openAIFromAnthropic(client: Json, now: () => number = Date.now): Translation {
  const wantsUsage = isObject(client.stream_options) && client.stream_options.include_usage === true;
  return {
    dialect: 'openai',
    protocol: 'anthropic',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      const body = toAnthropicMessages(client, target.upstreamModel, model);
      return { operation: 'messages', body: JSON.stringify(body), stream: client.stream === true, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      const message = parseUpstream(upstreamBody);
      const { completion, usage } = toCompletion(message, servedModel, Math.floor(now() / 1000));
      return { body: JSON.stringify(completion), usage, facts: messageFacts(message) };
    },
    stream: (servedModel: string) => new OpenAIFromAnthropicStream(servedModel, wantsUsage, Math.floor(now() / 1000)),
    errorMessage: anthropicErrorMessage,
  };
}
