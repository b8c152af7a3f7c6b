// Responses client -> Gemini upstream: the request goes Responses -> Chat Completions (responses-chat-request.ts)
// -> Gemini (openai-gemini-request.ts), the answer Gemini -> Chat Completions (completionOfGemini) -> Responses, so
// every mapping lives once. What Gemini refuses is checked first on the Responses fields, so the 400 names the field
// the client sent. The stream is in responses-gemini-stream.ts.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { checkFunctionName, mediaPart } from '../gemini/gemini-request.ts';
import { geminiErrorMessage } from '../gemini/gemini-usage.ts';
import { hostedToolsMode } from '../hosted-tools.ts';
import { invalid, isObject, parseUpstream, unsupported, type Json } from '../json-read.ts';
import { completionOfGemini } from '../openai/openai-gemini.ts';
import { toGeminiFromChat } from '../openai/openai-gemini-request.ts';
import { toChatRequest, type ToolNames } from './responses-chat-request.ts';
import { ResponsesFromGeminiStream } from './responses-gemini-stream.ts';
import { fromCompletion } from './responses-output.ts';
import { safeJson, type Translation, type UpstreamRequest } from '../types.ts';

/** Function names as Gemini will see them (a namespaced one flattened to `<namespace>__<name>`), named by their field. */
function checkToolNames(tools: unknown): void {
  if (!Array.isArray(tools)) return;
  tools.forEach((t, i) => {
    if (!isObject(t)) return;
    if (t.type === 'function' && typeof t.name === 'string') checkFunctionName(t.name, `tools[${i}].name`);
    if (t.type === 'namespace' && typeof t.name === 'string' && Array.isArray(t.tools)) {
      t.tools.forEach((u, j) => {
        if (isObject(u) && typeof u.name === 'string') checkFunctionName(`${String(t.name)}__${u.name}`, `tools[${i}].tools[${j}].name`);
      });
    }
  });
}

function refuseForGemini(client: Json, target: CompiledTarget): void {
  checkToolNames(client.tools);
  if (!Array.isArray(client.input)) return;
  const calls = new Set<unknown>();
  client.input.forEach((raw, i) => {
    if (!isObject(raw)) return;
    if (raw.type === 'function_call') {
      calls.add(raw.call_id);
      if (typeof raw.arguments === 'string' && raw.arguments.trim() !== '' && !isObject(safeJson(raw.arguments))) {
        throw unsupported(`input[${i}].arguments`, 'must be a JSON object (Gemini function call arguments are objects)');
      }
    }
    if (raw.type === 'function_call_output' && typeof raw.call_id === 'string' && !calls.has(raw.call_id)) {
      throw invalid(
        `input[${i}].call_id`,
        `${raw.call_id} is not the call_id of an earlier function_call item (Gemini needs the function's name for its output)`,
      );
    }
    if (Array.isArray(raw.content)) {
      raw.content.forEach((p, j) => {
        if (!isObject(p)) return;
        if (p.type === 'input_image' && typeof p.image_url === 'string') mediaPart(p.image_url, target, `input[${i}].content[${j}].image_url`);
        if (p.type === 'input_file' && typeof p.file_data === 'string') mediaPart(p.file_data, target, `input[${i}].content[${j}].file_data`);
      });
    }
  });
}

export function responsesFromGemini(client: Json, now: () => number = Date.now): Translation {
  let tools: ToolNames = new Map();
  return {
    dialect: 'openai',
    protocol: 'gemini',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      refuseForGemini(client, target);
      const chat = toChatRequest(client, target.upstreamModel, hostedToolsMode(model));
      tools = chat.tools;
      const body = toGeminiFromChat(chat.body, target, model, 'input');
      return { operation: 'chat', body: JSON.stringify(body), stream: client.stream === true, headers: {}, droppedTools: chat.dropped };
    },
    response(upstreamBody: string, servedModel: string) {
      const created = Math.floor(now() / 1000);
      const { completion, usage } = completionOfGemini(parseUpstream(upstreamBody), servedModel, created);
      const { response } = fromCompletion(client, completion, tools, servedModel, created);
      return { body: JSON.stringify(response), usage };
    },
    stream: (servedModel: string) => new ResponsesFromGeminiStream(client, tools, servedModel, Math.floor(now() / 1000)),
    errorMessage: geminiErrorMessage,
  };
}
