// OpenAI Chat client -> Bedrock Converse upstream. The request mapping is in openai-converse-request.ts; the answer
// goes Converse -> Anthropic message (converse-output.ts) -> Chat completion (toCompletion), and the stream
// Converse events -> Anthropic events (converse-stream.ts) -> chunks (OpenAIFromAnthropicStream), so each mapping
// lives once. Reasoning (reasoningContent) is not passed on: Chat Completions has no field for it; its tokens are
// part of outputTokens and billed as output.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { anthropicMessageOfConverse, converseMessageId } from '../converse/converse-output.ts';
import { ConverseStream, ConverseToAnthropic } from '../converse/converse-stream.ts';
import { converseErrorMessage } from '../converse/converse-usage.ts';
import { isObject, parseUpstream, type Json } from '../json-read.ts';
import { toCompletion } from './openai-anthropic.ts';
import { OpenAIFromAnthropicStream } from './openai-anthropic-stream.ts';
import { stopSequencesOf, toConverse } from './openai-converse-request.ts';
import type { Translation, UpstreamRequest } from '../types.ts';

export function openAIFromConverse(client: Json, now: () => number = Date.now, newId: () => string = converseMessageId): Translation {
  const wantsUsage = isObject(client.stream_options) && client.stream_options.include_usage === true;
  const stops = stopSequencesOf(client);
  return {
    dialect: 'openai',
    protocol: 'converse',
    request(_target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      return { operation: 'chat', body: JSON.stringify(toConverse(client, model)), stream: client.stream === true, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      // The usage as Converse reported it (a missing count stays flagged), the completion built from the message.
      const { message, usage } = anthropicMessageOfConverse(parseUpstream(upstreamBody), servedModel, newId(), stops);
      const { completion } = toCompletion(message, servedModel, Math.floor(now() / 1000));
      return { body: JSON.stringify(completion), usage };
    },
    stream: (servedModel: string) =>
      new ConverseStream(
        new ConverseToAnthropic(servedModel, newId(), stops),
        new OpenAIFromAnthropicStream(servedModel, wantsUsage, Math.floor(now() / 1000)),
      ),
    errorMessage: converseErrorMessage,
  };
}
