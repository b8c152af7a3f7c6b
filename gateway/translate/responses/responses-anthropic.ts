// Responses client -> Anthropic upstream: the request goes Responses -> Chat Completions (responses-chat-request.ts)
// -> Messages (openai-anthropic-request.ts), the answer Messages -> Chat Completions (toCompletion) -> Responses,
// so every mapping lives once. What Anthropic refuses is checked first on the Responses fields, so the 400 names
// the field the client sent. The stream is in responses-anthropic-stream.ts.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { messageFacts } from '../answer-facts.ts';
import { anthropicErrorMessage } from '../anthropic/anthropic-usage.ts';
import { hostedToolsMode } from '../hosted-tools.ts';
import { isObject, parseUpstream, unsupported, type Json } from '../json-read.ts';
import { toCompletion } from '../openai/openai-anthropic.ts';
import { toAnthropicMessages } from '../openai/openai-anthropic-request.ts';
import { ResponsesFromAnthropicStream } from './responses-anthropic-stream.ts';
import { toChatRequest, type ToolNames } from './responses-chat-request.ts';
import { fromCompletion } from './responses-output.ts';
import { safeJson, type Translation, type UpstreamRequest } from '../types.ts';

const NO_ANTHROPIC = 'has no equivalent on an Anthropic upstream, which serves this model';
const PDF = /^data:application\/pdf;base64,/;

function refuseForAnthropic(client: Json): void {
  const format = isObject(client.text) && isObject(client.text.format) ? client.text.format : undefined;
  if (format?.type === 'json_object') throw unsupported('text.format', `json_object ${NO_ANTHROPIC}: use json_schema`);
  if (!Array.isArray(client.input)) return;
  client.input.forEach((raw, i) => {
    if (!isObject(raw)) return;
    if (raw.type === 'function_call' && typeof raw.arguments === 'string' && raw.arguments.trim() !== '' && !isObject(safeJson(raw.arguments))) {
      throw unsupported(`input[${i}].arguments`, 'must be a JSON object (Anthropic tool inputs are objects)');
    }
    if (Array.isArray(raw.content)) {
      raw.content.forEach((p, j) => {
        if (isObject(p) && p.type === 'input_file' && !(typeof p.file_data === 'string' && PDF.test(p.file_data))) {
          throw unsupported(`input[${i}].content[${j}]`, `only inline PDFs (file_data) can be sent to an Anthropic upstream`);
        }
      });
    }
  });
}

export function responsesFromAnthropic(client: Json, now: () => number = Date.now): Translation {
  let tools: ToolNames = new Map();
  return {
    dialect: 'openai',
    protocol: 'anthropic',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      refuseForAnthropic(client);
      const chat = toChatRequest(client, target.upstreamModel, hostedToolsMode(model));
      tools = chat.tools;
      const body = toAnthropicMessages(chat.body, target.upstreamModel, model);
      return { operation: 'messages', body: JSON.stringify(body), stream: client.stream === true, headers: {}, droppedTools: chat.dropped };
    },
    response(upstreamBody: string, servedModel: string) {
      const created = Math.floor(now() / 1000);
      const message = parseUpstream(upstreamBody);
      const { completion, usage } = toCompletion(message, servedModel, created);
      const { response } = fromCompletion(client, completion, tools, servedModel, created);
      return { body: JSON.stringify(response), usage, facts: messageFacts(message) };
    },
    stream: (servedModel: string) => new ResponsesFromAnthropicStream(client, tools, servedModel, Math.floor(now() / 1000)),
    errorMessage: anthropicErrorMessage,
  };
}
