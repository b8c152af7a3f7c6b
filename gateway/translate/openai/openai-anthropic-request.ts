// OpenAI Chat Completions request -> Anthropic Messages request (the body only; see openai-anthropic.ts).
// System/developer messages become `system` (Anthropic has no system turn inside `messages` and refuses one: a later
// one is appended to `system`, in order); tool messages become tool_result
// blocks of one user turn; max_tokens, which Anthropic requires, defaults to the model's maxOutputTokens.
// Dropped (sampling and service hints without an Anthropic equivalent): seed, penalties, logit_bias, logprobs,
// reasoning_effort, verbosity, service_tier, store, metadata, prediction, prompt_cache_key. Refused: n > 1,
// audio, legacy functions, json_object, web search, content parts Anthropic cannot receive.
import type { CompiledModel } from '../../contract/snapshot.ts';
import { arrayAt, blocksAt, isObject, objectAt, optionalString, stringAt, unsupported, invalid, type Json } from '../json-read.ts';
import { maxTokensOf, refuseChatOnly, textOf } from '../chat-request.ts';

const NO_ANTHROPIC = 'has no equivalent on an Anthropic upstream, which serves this model';

export function toAnthropicMessages(client: Json, upstreamModel: string, model: CompiledModel): Json {
  refuseChatOnly(client, NO_ANTHROPIC);
  const { system, messages } = messagesOf(arrayAt(client.messages, 'messages'));
  const out: Json = { model: upstreamModel, max_tokens: maxTokensOf(client, model), messages };
  if (system.length > 0) out.system = system;
  if (typeof client.temperature === 'number') out.temperature = Math.min(1, Math.max(0, client.temperature));
  if (typeof client.top_p === 'number') out.top_p = client.top_p;
  const stop = typeof client.stop === 'string' ? [client.stop] : Array.isArray(client.stop) ? client.stop : [];
  if (stop.length > 0) out.stop_sequences = stop;
  if (client.stream === true) out.stream = true;
  const user = optionalString(client.safety_identifier, 'safety_identifier') ?? optionalString(client.user, 'user');
  if (user !== undefined) out.metadata = { user_id: user };
  const tools = Array.isArray(client.tools) ? client.tools.map((t, i) => toolOf(t, `tools[${i}]`)) : [];
  if (tools.length > 0) {
    out.tools = tools;
    const choice = toolChoiceOf(client.tool_choice, client.parallel_tool_calls === false);
    if (choice) out.tool_choice = choice;
  }
  const format = isObject(client.response_format) ? client.response_format : undefined;
  if (format?.type === 'json_schema') {
    const schema = isObject(format.json_schema) ? format.json_schema.schema : undefined;
    out.output_config = { format: { type: 'json_schema', schema: objectAt(schema, 'response_format.json_schema.schema') } };
  }
  return out;
}

function messagesOf(list: unknown[]): { system: Json[]; messages: Json[] } {
  const system: Json[] = [];
  const messages: Json[] = [];
  let toolTurn: Json[] | null = null; // the user turn collecting tool results (and the user content that follows)
  list.forEach((raw, i) => {
    const m = objectAt(raw, `messages[${i}]`);
    const path = `messages[${i}].content`;
    if (m.role !== 'tool' && m.role !== 'user') toolTurn = null;
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...textBlocks(m.content, path));
        break;
      case 'user': {
        const blocks = userBlocks(m.content, path);
        if (toolTurn) toolTurn.push(...blocks);
        else messages.push({ role: 'user', content: typeof m.content === 'string' ? m.content : blocks });
        toolTurn = null;
        break;
      }
      case 'assistant': {
        // An empty assistant turn (no text, no calls) says nothing; Anthropic refuses empty turns.
        const blocks = assistantBlocks(m, `messages[${i}]`);
        if (blocks.length > 0) messages.push({ role: 'assistant', content: blocks });
        break;
      }
      case 'tool': {
        const result = { type: 'tool_result', tool_use_id: stringAt(m.tool_call_id, `messages[${i}].tool_call_id`), content: toolText(m.content, path) };
        if (!toolTurn) messages.push({ role: 'user', content: (toolTurn = []) });
        toolTurn.push(result);
        break;
      }
      default:
        throw unsupported(`messages[${i}].role`, `the role ${String(m.role)} is not translated to Anthropic`);
    }
  });
  return { system, messages };
}

function textBlocks(content: unknown, path: string): Json[] {
  return textOf(content, path)
    .filter((t) => t !== '')
    .map((text) => ({ type: 'text', text }));
}

function toolText(content: unknown, path: string): string {
  return textOf(content, path).join('\n');
}

function userBlocks(content: unknown, path: string): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return blocksAt(content, path).map((p, i) => {
    const where = `${path}[${i}]`;
    switch (p.type) {
      case 'text':
        return { type: 'text', text: stringAt(p.text, `${where}.text`) };
      case 'image_url':
        return imageBlock(objectAt(p.image_url, `${where}.image_url`), where);
      case 'file':
        return fileBlock(objectAt(p.file, `${where}.file`), where);
      default:
        throw unsupported(where, `content of type ${String(p.type)} ${NO_ANTHROPIC}`);
    }
  });
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function imageBlock(image: Json, path: string): Json {
  const url = stringAt(image.url, `${path}.image_url.url`);
  const m = DATA_URL.exec(url);
  if (m) return { type: 'image', source: { type: 'base64', media_type: m[1], data: m[2] } };
  if (/^https?:\/\//.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw invalid(`${path}.image_url.url`, 'must be an http(s) URL or a base64 data URL');
}

/** A PDF sent inline becomes a document block; uploaded file ids live at OpenAI and cannot be sent. */
function fileBlock(file: Json, path: string): Json {
  const m = typeof file.file_data === 'string' ? DATA_URL.exec(file.file_data) : null;
  if (!m || m[1] !== 'application/pdf') throw unsupported(`${path}.file`, `only inline PDFs (file_data) can be sent to an Anthropic upstream`);
  return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: m[2] } };
}

function assistantBlocks(m: Json, path: string): Json[] {
  const blocks: Json[] = textBlocks(m.content, `${path}.content`);
  if (m.tool_calls !== undefined && m.tool_calls !== null) {
    arrayAt(m.tool_calls, `${path}.tool_calls`).forEach((raw, i) => {
      const where = `${path}.tool_calls[${i}]`;
      const c = objectAt(raw, where);
      const fn = objectAt(c.function, `${where}.function`);
      const args = stringAt(fn.arguments ?? '{}', `${where}.function.arguments`);
      let input: unknown;
      try {
        input = JSON.parse(args.trim() === '' ? '{}' : args);
      } catch {
        throw invalid(`${where}.function.arguments`, 'must be a JSON object (Anthropic tool inputs are objects)');
      }
      blocks.push({
        type: 'tool_use',
        id: stringAt(c.id, `${where}.id`),
        name: stringAt(fn.name, `${where}.function.name`),
        input: objectAt(input, `${where}.function.arguments`),
      });
    });
  }
  return blocks;
}

function toolOf(raw: unknown, path: string): Json {
  const t = objectAt(raw, path);
  if (t.type !== 'function') throw unsupported(path, `a ${String(t.type)} tool ${NO_ANTHROPIC}`);
  const fn = objectAt(t.function, `${path}.function`);
  const out: Json = { name: stringAt(fn.name, `${path}.function.name`) };
  const description = optionalString(fn.description, `${path}.function.description`);
  if (description !== undefined) out.description = description;
  out.input_schema = isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} };
  if (fn.strict === true) out.strict = true;
  return out;
}

/** auto/required/none/function -> auto/any/none/tool; parallel_tool_calls: false -> disable_parallel_tool_use. */
function toolChoiceOf(choice: unknown, noParallel: boolean): Json | null {
  const extra = noParallel ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined || choice === null) return noParallel ? { type: 'auto', ...extra } : null;
  if (choice === 'auto') return { type: 'auto', ...extra };
  if (choice === 'required') return { type: 'any', ...extra };
  if (choice === 'none') return { type: 'none' };
  if (isObject(choice) && choice.type === 'function') {
    const fn = objectAt(choice.function, 'tool_choice.function');
    return { type: 'tool', name: stringAt(fn.name, 'tool_choice.function.name'), ...extra };
  }
  throw unsupported('tool_choice', 'this tool_choice is not known');
}
