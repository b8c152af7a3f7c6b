// Anthropic client -> Bedrock Converse upstream (the models Bedrock serves through Converse, not Claude, which goes
// through Invoke in Anthropic's protocol). The request mapping is in anthropic-converse-request.ts; the answer is
// an Anthropic message already (converse-output.ts), reasoning as thinking blocks; the stream is the Anthropic
// events converse-stream.ts synthesizes, written as they are.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { stopSequencesOfAnthropic, toConverseFromAnthropic } from './anthropic-converse-request.ts';
import { anthropicMessageOfConverse, converseMessageId } from '../converse/converse-output.ts';
import { AnthropicEventWriter, ConverseStream, ConverseToAnthropic } from '../converse/converse-stream.ts';
import { converseErrorMessage } from '../converse/converse-usage.ts';
import { parseUpstream, type Json } from '../json-read.ts';
import { anthropicStreamError } from '../stream-errors.ts';
import type { Translation, UpstreamRequest } from '../types.ts';

export function anthropicFromConverse(client: Json, newId: () => string = converseMessageId): Translation {
  const stops = stopSequencesOfAnthropic(client);
  return {
    dialect: 'anthropic',
    protocol: 'converse',
    request(_target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      return { operation: 'chat', body: JSON.stringify(toConverseFromAnthropic(client, model)), stream: client.stream === true, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      const { message, usage } = anthropicMessageOfConverse(parseUpstream(upstreamBody), servedModel, newId(), stops);
      return { body: JSON.stringify(message), usage };
    },
    stream: (servedModel: string) => new ConverseStream(new ConverseToAnthropic(servedModel, newId(), stops), new AnthropicEventWriter(anthropicStreamError)),
    errorMessage: converseErrorMessage,
  };
}
