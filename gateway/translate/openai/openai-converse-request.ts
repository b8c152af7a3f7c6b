// OpenAI Chat Completions request -> Bedrock Converse request (the body only; the model goes in the URL: see
// openai-converse.ts). System/developer messages become `system`; tool messages become toolResult blocks of a user
// turn; consecutive turns of one role are merged (Converse requires alternating roles); maxTokens is always sent:
// the client's max_completion_tokens / max_tokens, else the model's maxOutputTokens (the cap the gateway reserved).
// Dropped (hints without a Converse equivalent): seed, penalties, logit_bias, logprobs, reasoning_effort,
// verbosity, service_tier, store, metadata, user, prediction, prompt_cache_key, parallel_tool_calls. Refused: n > 1, audio, legacy functions, json_object, web search, images by URL (Bedrock fetches no URL),
// files other than inline PDFs, tool_choice none on a conversation that holds tool calls.
import type { CompiledModel } from '../../contract/snapshot.ts';
import {
  alternating,
  imageOfUrl,
  inferenceConfigOf,
  NO_CONVERSE,
  outputConfigOf,
  pdfOfDataUrl,
  toolSpecOf,
  usesTools,
  type Turn,
} from '../converse/converse-blocks.ts';
import { arrayAt, blocksAt, invalid, isObject, objectAt, optionalString, stringAt, unsupported, type Json } from '../json-read.ts';
import { maxTokensOf, refuseChatOnly, textOf } from '../chat-request.ts';

export function toConverse(client: Json, model: CompiledModel): Json {
  refuseChatOnly(client, NO_CONVERSE);
  const { system, turns } = messagesOf(arrayAt(client.messages, 'messages'));
  const messages = alternating(turns);
  const stop = stopSequencesOf(client);
  const out: Json = { messages };
  if (system.length > 0) out.system = system;
  out.inferenceConfig = inferenceConfigOf(maxTokensOf(client, model), client.temperature, client.top_p, stop);
  const tools = Array.isArray(client.tools) ? client.tools.map((t, i) => toolOf(t, `tools[${i}]`)) : [];
  const config = toolConfigOf(tools, client.tool_choice, usesTools(messages));
  if (config) out.toolConfig = config;
  const format = isObject(client.response_format) ? client.response_format : undefined;
  if (format?.type === 'json_schema') {
    const js = objectAt(format.json_schema, 'response_format.json_schema');
    const name = optionalString(js.name, 'response_format.json_schema.name');
    const description = optionalString(js.description, 'response_format.json_schema.description');
    out.outputConfig = outputConfigOf(js.schema, 'response_format.json_schema.schema', name, description);
  }
  return out;
}

/** The stop sequences of the request, to name the one that fired (Converse does not say). */
export function stopSequencesOf(client: Json): string[] {
  if (typeof client.stop === 'string') return [client.stop];
  return Array.isArray(client.stop) ? client.stop.filter((s): s is string => typeof s === 'string') : [];
}

function messagesOf(list: unknown[]): { system: Json[]; turns: Turn[] } {
  const system: Json[] = [];
  const turns: Turn[] = [];
  list.forEach((raw, i) => {
    const m = objectAt(raw, `messages[${i}]`);
    const path = `messages[${i}].content`;
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...textBlocks(m.content, path));
        break;
      case 'user':
        turns.push({ role: 'user', content: userBlocks(m.content, path) });
        break;
      case 'assistant':
        turns.push({ role: 'assistant', content: assistantBlocks(m, `messages[${i}]`) });
        break;
      case 'tool': {
        const toolResult = { toolUseId: stringAt(m.tool_call_id, `messages[${i}].tool_call_id`), content: [{ text: textOf(m.content, path).join('\n') }] };
        turns.push({ role: 'user', content: [{ toolResult }] });
        break;
      }
      default:
        throw unsupported(`messages[${i}].role`, `the role ${String(m.role)} is not translated to Converse`);
    }
  });
  return { system, turns };
}

/** Text blocks; Converse refuses blank text, so empty parts are left out. */
function textBlocks(content: unknown, path: string): Json[] {
  return textOf(content, path)
    .filter((t) => t !== '')
    .map((text) => ({ text }));
}

function userBlocks(content: unknown, path: string): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const out: Json[] = [];
  blocksAt(content, path).forEach((p, i) => {
    const where = `${path}[${i}]`;
    switch (p.type) {
      case 'text': {
        const text = stringAt(p.text, `${where}.text`);
        if (text !== '') out.push({ text });
        break;
      }
      case 'image_url':
        out.push(imageOfUrl(stringAt(objectAt(p.image_url, `${where}.image_url`).url, `${where}.image_url.url`), `${where}.image_url.url`));
        break;
      case 'file': {
        const file = objectAt(p.file, `${where}.file`);
        const doc =
          typeof file.file_data === 'string'
            ? pdfOfDataUrl(file.file_data, optionalString(file.filename, `${where}.file.filename`), `document ${i + 1}`)
            : null;
        if (!doc) throw unsupported(`${where}.file`, `only inline PDFs (file_data) can be sent to a Bedrock Converse upstream`);
        out.push(doc);
        break;
      }
      default:
        throw unsupported(where, `content of type ${String(p.type)} ${NO_CONVERSE}`);
    }
  });
  return out;
}

function assistantBlocks(m: Json, path: string): Json[] {
  const blocks: Json[] = textBlocks(m.content, `${path}.content`);
  if (m.tool_calls === undefined || m.tool_calls === null) return blocks;
  arrayAt(m.tool_calls, `${path}.tool_calls`).forEach((raw, i) => {
    const where = `${path}.tool_calls[${i}]`;
    const c = objectAt(raw, where);
    const fn = objectAt(c.function, `${where}.function`);
    const args = stringAt(fn.arguments ?? '{}', `${where}.function.arguments`);
    let input: unknown;
    try {
      input = JSON.parse(args.trim() === '' ? '{}' : args);
    } catch {
      throw invalid(`${where}.function.arguments`, 'must be a JSON object (Converse tool inputs are objects)');
    }
    blocks.push({
      toolUse: {
        toolUseId: stringAt(c.id, `${where}.id`),
        name: stringAt(fn.name, `${where}.function.name`),
        input: objectAt(input, `${where}.function.arguments`),
      },
    });
  });
  return blocks;
}

function toolOf(raw: unknown, path: string): Json {
  const t = objectAt(raw, path);
  if (t.type !== 'function') throw unsupported(path, `a ${String(t.type)} tool ${NO_CONVERSE}`);
  const fn = objectAt(t.function, `${path}.function`);
  return toolSpecOf(stringAt(fn.name, `${path}.function.name`), optionalString(fn.description, `${path}.function.description`), fn.parameters, fn.strict);
}

/**
 * tools and tool_choice -> toolConfig: auto/required/function -> {auto}/{any}/{tool}. Converse has no `none`: the
 * tools are left out instead, which it allows only while the conversation holds no tool calls.
 */
function toolConfigOf(tools: Json[], choice: unknown, conversationUsesTools: boolean): Json | null {
  if (choice === 'none') {
    if (conversationUsesTools)
      throw unsupported(
        'tool_choice',
        'none cannot be sent to a Bedrock Converse upstream while the conversation holds tool calls (Converse has no none, and needs the tools then)',
      );
    return null;
  }
  if (tools.length === 0) return null;
  const out: Json = { tools };
  if (choice === undefined || choice === null) return out;
  if (choice === 'auto') out.toolChoice = { auto: {} };
  else if (choice === 'required') out.toolChoice = { any: {} };
  else if (isObject(choice) && choice.type === 'function') {
    out.toolChoice = { tool: { name: stringAt(objectAt(choice.function, 'tool_choice.function').name, 'tool_choice.function.name') } };
  } else throw unsupported('tool_choice', 'this tool_choice is not known');
  return out;
}
