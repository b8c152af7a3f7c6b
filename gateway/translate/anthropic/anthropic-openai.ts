// Anthropic client -> OpenAI-protocol upstream (OpenAI-compatible vendors and the built-in mock).
// The request mapping is in anthropic-openai-request.ts, the stream in anthropic-openai-stream.ts.
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { toOpenAIChat } from './anthropic-openai-request.ts';
import { AnthropicFromOpenAIStream } from './anthropic-openai-stream.ts';
import { toAnthropicUsage } from './anthropic-usage.ts';
import { completionFacts } from '../answer-facts.ts';
import { messageId } from '../ids.ts';
import { isObject, parseUpstream, type Json } from '../json-read.ts';
import { fromOpenAIUsage, openAIErrorMessage } from '../openai/openai-usage.ts';
import { stopReasonOf } from '../stop-reasons.ts';
import { safeJson, type Translation, type UpstreamRequest, type Usage } from '../types.ts';

/** Tool arguments as an input object; arguments that are not a JSON object are kept, not lost. */
export function toolInput(args: unknown): Json {
  if (typeof args !== 'string' || args.trim() === '') return {};
  const v = safeJson(args);
  return isObject(v) ? v : { _raw_arguments: args };
}

export function contentOf(message: Json): Json[] {
  const blocks: Json[] = [];
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  const text = typeof message.content === 'string' ? message.content : '';
  if (text !== '' || calls.length === 0) blocks.push({ type: 'text', text });
  for (const c of calls) {
    const fn = isObject(c.function) ? c.function : {};
    blocks.push({ type: 'tool_use', id: String(c.id ?? ''), name: String(fn.name ?? ''), input: toolInput(fn.arguments) });
  }
  return blocks;
}

export function toAnthropicMessage(completion: Json, servedModel: string): { message: Json; usage: Usage } {
  const choice = Array.isArray(completion.choices) && isObject(completion.choices[0]) ? completion.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const usage = fromOpenAIUsage(completion.usage as Parameters<typeof fromOpenAIUsage>[0]);
  return {
    usage,
    message: {
      id: messageId(completion.id),
      type: 'message',
      role: 'assistant',
      model: servedModel,
      content: contentOf(message),
      stop_reason: stopReasonOf(choice.finish_reason),
      stop_sequence: null,
      usage: toAnthropicUsage(usage),
    },
  };
}

export function anthropicFromOpenAI(client: Json): Translation {
  return {
    dialect: 'anthropic',
    protocol: 'openai',
    request(target: CompiledTarget): UpstreamRequest {
      return { operation: 'chat', body: JSON.stringify(toOpenAIChat(client, target.upstreamModel)), stream: client.stream === true, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      const completion = parseUpstream(upstreamBody);
      const { message, usage } = toAnthropicMessage(completion, servedModel);
      return { body: JSON.stringify(message), usage, facts: completionFacts(completion) };
    },
    stream: (servedModel: string) => new AnthropicFromOpenAIStream(servedModel),
    errorMessage: openAIErrorMessage,
  };
}
