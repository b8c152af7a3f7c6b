// Responses client -> OpenAI-protocol upstream. A target with responsesApi (OpenAI itself) gets the request passed
// through (responses-openai-passthrough.ts); any other (OpenAI-compatible vendors, the mock) gets it translated to
// Chat Completions (responses-chat-request.ts) and its answer or stream translated back. One translation serves
// every target of a call for this protocol; dispatch tries targets one at a time and reads the answer of the one
// whose request it built last, so the translation follows the mode of that request.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { completionFacts } from '../answer-facts.ts';
import { hostedToolsMode } from '../hosted-tools.ts';
import { parseUpstream, type Json } from '../json-read.ts';
import { openAIErrorMessage } from '../openai/openai-usage.ts';
import { toChatRequest, type ToolNames } from './responses-chat-request.ts';
import { ResponsesFromChatStream } from './responses-chat-stream.ts';
import { responsesPassThrough } from './responses-openai-passthrough.ts';
import { fromCompletion } from './responses-output.ts';
import type { Translation, UpstreamRequest } from '../types.ts';

export function responsesViaChat(client: Json, now: () => number = Date.now): Translation {
  let tools: ToolNames = new Map();
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      const chat = toChatRequest(client, target.upstreamModel, hostedToolsMode(model));
      tools = chat.tools;
      // The output cap the hold assumed goes upstream (estimate.ts).
      chat.body.max_completion_tokens ??= model.maxOutputTokens;
      return { operation: 'chat', body: JSON.stringify(chat.body), stream: client.stream === true, headers: {}, droppedTools: chat.dropped };
    },
    response(upstreamBody: string, servedModel: string) {
      const completion = parseUpstream(upstreamBody);
      const { response, usage } = fromCompletion(client, completion, tools, servedModel, Math.floor(now() / 1000));
      return { body: JSON.stringify(response), usage, facts: completionFacts(completion) };
    },
    stream: (servedModel: string) => new ResponsesFromChatStream(client, tools, servedModel, Math.floor(now() / 1000)),
    errorMessage: openAIErrorMessage,
  };
}

export function responsesFromOpenAI(client: Json, now: () => number = Date.now): Translation {
  const passThrough = responsesPassThrough(client);
  const viaChat = responsesViaChat(client, now);
  let current = viaChat;
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      current = target.responsesApi === true ? passThrough : viaChat;
      return current.request(target, model);
    },
    response: (upstreamBody, servedModel) => current.response(upstreamBody, servedModel),
    factsOf: (body) => current.factsOf?.(body) ?? { id: null, finishReasons: [] },
    stream: (servedModel, watch) => current.stream(servedModel, watch),
    errorMessage: openAIErrorMessage,
  };
}
