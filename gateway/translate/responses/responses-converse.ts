// Responses client -> Bedrock Converse upstream: the request goes Responses -> Chat Completions
// (responses-chat-request.ts) -> Converse (openai-converse-request.ts), the answer Converse -> Anthropic message ->
// Chat Completions -> Responses, the stream Converse events -> Anthropic events -> Responses events, so every
// mapping lives once. What Converse refuses is checked first on the Responses fields, so the 400 names the field
// the client sent.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { imageOfUrl, NO_CONVERSE } from '../converse/converse-blocks.ts';
import { anthropicMessageOfConverse, converseMessageId } from '../converse/converse-output.ts';
import { ConverseStream, ConverseToAnthropic } from '../converse/converse-stream.ts';
import { converseErrorMessage } from '../converse/converse-usage.ts';
import { hostedToolsMode } from '../hosted-tools.ts';
import { isObject, parseUpstream, unsupported, type Json } from '../json-read.ts';
import { toCompletion } from '../openai/openai-anthropic.ts';
import { toConverse } from '../openai/openai-converse-request.ts';
import { ResponsesFromAnthropicStream } from './responses-anthropic-stream.ts';
import { toChatRequest, type ToolNames } from './responses-chat-request.ts';
import { fromCompletion } from './responses-output.ts';
import { safeJson, type Translation, type UpstreamRequest } from '../types.ts';

const PDF = /^data:application\/pdf;base64,/;

function refuseForConverse(client: Json): void {
  const format = isObject(client.text) && isObject(client.text.format) ? client.text.format : undefined;
  if (format?.type === 'json_object') throw unsupported('text.format', `json_object ${NO_CONVERSE}: use json_schema`);
  if (!Array.isArray(client.input)) return;
  client.input.forEach((raw, i) => {
    if (!isObject(raw)) return;
    if (raw.type === 'function_call' && typeof raw.arguments === 'string' && raw.arguments.trim() !== '' && !isObject(safeJson(raw.arguments))) {
      throw unsupported(`input[${i}].arguments`, 'must be a JSON object (Converse tool inputs are objects)');
    }
    if (!Array.isArray(raw.content)) return;
    raw.content.forEach((p, j) => {
      if (!isObject(p)) return;
      if (p.type === 'input_file' && !(typeof p.file_data === 'string' && PDF.test(p.file_data))) {
        throw unsupported(`input[${i}].content[${j}]`, 'only inline PDFs (file_data) can be sent to a Bedrock Converse upstream');
      }
      // Bedrock fetches no URL and takes four image types: refused here, naming the client's field.
      if (p.type === 'input_image' && typeof p.image_url === 'string') imageOfUrl(p.image_url, `input[${i}].content[${j}].image_url`);
    });
  });
}

export function responsesFromConverse(client: Json, now: () => number = Date.now, newId: () => string = converseMessageId): Translation {
  let tools: ToolNames = new Map();
  return {
    dialect: 'openai',
    protocol: 'converse',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      refuseForConverse(client);
      const chat = toChatRequest(client, target.upstreamModel, hostedToolsMode(model));
      tools = chat.tools;
      return { operation: 'chat', body: JSON.stringify(toConverse(chat.body, model)), stream: client.stream === true, headers: {}, droppedTools: chat.dropped };
    },
    response(upstreamBody: string, servedModel: string) {
      const created = Math.floor(now() / 1000);
      const { message, usage } = anthropicMessageOfConverse(parseUpstream(upstreamBody), servedModel, newId());
      const { completion } = toCompletion(message, servedModel, created);
      const { response } = fromCompletion(client, completion, tools, servedModel, created);
      return { body: JSON.stringify(response), usage };
    },
    stream: (servedModel: string) =>
      new ConverseStream(
        new ConverseToAnthropic(servedModel, newId(), []),
        new ResponsesFromAnthropicStream(client, tools, servedModel, Math.floor(now() / 1000)),
      ),
    errorMessage: converseErrorMessage,
  };
}
