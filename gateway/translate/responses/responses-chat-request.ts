// Responses API request -> Chat Completions request (the body only): `instructions` and `input` items to messages,
// function tools (namespaced ones flattened to `<namespace>__<name>`), tool_choice, sampling, max_output_tokens,
// text.format. Reused for Anthropic upstreams (responses-anthropic.ts), which take the Chat body on from there.
// Dropped (hints, or state this gateway does not keep): include, store, metadata, truncation, service_tier,
// max_tool_calls, top_logprobs, stream_options, client_metadata, reasoning.summary, text.verbosity, prompt_cache
// retention, and the reasoning items of earlier turns (only the upstream that wrote them can read them). Built-in
// tools that run on OpenAI's side are dropped or refused as the route says (hosted-tools.ts). Refused: the other
// built-in tools (computer use, local shell, ...), custom (freeform) tools, the items built-in tools leave in
// `input`, images or files by id, stored prompts.
import { forcedHostedTool, isHostedTool, type HostedToolsMode } from '../hosted-tools.ts';
import { arrayAt, blocksAt, isObject, objectAt, optionalString, stringAt, unsupported, invalid, type Json } from '../json-read.ts';

const NEEDS_RESPONSES = "has no equivalent on this model's upstream, which does not speak the Responses API (it needs a target with responsesApi)";

/** Flat tool name (as the upstream sees it) -> the namespace and name the client declared. */
export type ToolNames = Map<string, { namespace: string; name: string }>;

export interface ChatRequest {
  body: Json;
  tools: ToolNames;
  /** The hosted tools left out of the request (their types, each once, in the client's order). */
  dropped: string[];
}

export function toChatRequest(client: Json, upstreamModel: string, hosted: HostedToolsMode = 'drop'): ChatRequest {
  refuseResponsesOnly(client);
  const forced = forcedHostedTool(client.tool_choice);
  if (forced !== null) throw unsupported('tool_choice', `the ${forced} tool ${NEEDS_RESPONSES}`);
  const tools: ToolNames = new Map();
  const dropped: string[] = [];
  const chatTools = toolsOf(client.tools, tools, hosted === 'drop' ? dropped : null);
  const out: Json = { model: upstreamModel, messages: messagesOf(client) };
  if (typeof client.max_output_tokens === 'number') out.max_completion_tokens = client.max_output_tokens;
  if (typeof client.temperature === 'number') out.temperature = client.temperature;
  if (typeof client.top_p === 'number') out.top_p = client.top_p;
  if (client.stream === true) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  if (chatTools.length > 0) {
    out.tools = chatTools;
    const choice = toolChoiceOf(client.tool_choice, tools);
    if (choice !== undefined) out.tool_choice = choice;
    if (typeof client.parallel_tool_calls === 'boolean') out.parallel_tool_calls = client.parallel_tool_calls;
  }
  const format = isObject(client.text) ? client.text.format : undefined;
  if (format !== undefined && format !== null) {
    const rf = responseFormatOf(format);
    if (rf) out.response_format = rf;
  }
  const effort = isObject(client.reasoning) ? client.reasoning.effort : undefined;
  if (typeof effort === 'string') out.reasoning_effort = effort;
  for (const k of ['user', 'safety_identifier', 'prompt_cache_key'] as const) {
    const v = optionalString(client[k], k);
    if (v !== undefined) out[k] = v;
  }
  return { body: out, tools, dropped };
}

function refuseResponsesOnly(client: Json): void {
  if (client.prompt !== undefined && client.prompt !== null) throw unsupported('prompt', `a stored prompt ${NEEDS_RESPONSES}`);
}

function responseFormatOf(raw: unknown): Json | null {
  const f = objectAt(raw, 'text.format');
  switch (f.type) {
    case 'text':
      return null;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const schema: Json = { name: optionalString(f.name, 'text.format.name') ?? 'output', schema: objectAt(f.schema, 'text.format.schema') };
      if (typeof f.description === 'string') schema.description = f.description;
      if (typeof f.strict === 'boolean') schema.strict = f.strict;
      return { type: 'json_schema', json_schema: schema };
    }
    default:
      throw unsupported('text.format.type', `the format ${String(f.type)} is not known`);
  }
}

function functionTool(t: Json, path: string, flat: string): Json {
  const fn: Json = { name: flat };
  const description = optionalString(t.description, `${path}.description`);
  if (description !== undefined) fn.description = description;
  fn.parameters = isObject(t.parameters) ? t.parameters : { type: 'object', properties: {} };
  if (t.strict === true) fn.strict = true;
  return { type: 'function', function: fn };
}

/** `dropped` collects the hosted tools left out; null refuses them. */
function toolsOf(raw: unknown, names: ToolNames, dropped: string[] | null): Json[] {
  if (raw === undefined || raw === null) return [];
  const out: Json[] = [];
  arrayAt(raw, 'tools').forEach((x, i) => {
    const path = `tools[${i}]`;
    const t = objectAt(x, path);
    if (t.type === 'function') {
      out.push(functionTool(t, path, stringAt(t.name, `${path}.name`)));
    } else if (t.type === 'namespace') {
      const namespace = stringAt(t.name, `${path}.name`);
      arrayAt(t.tools, `${path}.tools`).forEach((y, j) => {
        const inner = objectAt(y, `${path}.tools[${j}]`);
        if (inner.type !== 'function') throw unsupported(`${path}.tools[${j}]`, `a ${String(inner.type)} tool ${NEEDS_RESPONSES}`);
        const name = stringAt(inner.name, `${path}.tools[${j}].name`);
        const flat = `${namespace}__${name}`;
        names.set(flat, { namespace, name });
        out.push(functionTool(inner, `${path}.tools[${j}]`, flat));
      });
    } else if (dropped && isHostedTool(t.type)) {
      if (!dropped.includes(t.type)) dropped.push(t.type);
    } else {
      throw unsupported(path, `the ${String(t.type)} tool ${NEEDS_RESPONSES}`);
    }
  });
  return out;
}

/** The flat name a function call goes by upstream. */
function flatName(name: string, namespace: unknown): string {
  return typeof namespace === 'string' && namespace !== '' ? `${namespace}__${name}` : name;
}

function toolChoiceOf(choice: unknown, names: ToolNames): unknown {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (isObject(choice) && choice.type === 'function') {
    const name = stringAt(choice.name, 'tool_choice.name');
    const flat = [...names].find(([, v]) => v.name === name && v.namespace === choice.namespace)?.[0] ?? name;
    return { type: 'function', function: { name: flat } };
  }
  throw unsupported('tool_choice', `this tool_choice ${NEEDS_RESPONSES}`);
}

function messagesOf(client: Json): Json[] {
  const out: Json[] = [];
  const instructions = optionalString(client.instructions, 'instructions');
  if (instructions !== undefined && instructions !== '') out.push({ role: 'system', content: instructions });
  if (typeof client.input === 'string') {
    out.push({ role: 'user', content: client.input });
    return out;
  }
  // The assistant message that tool calls of the same turn join (Chat keeps them on one message).
  let turn: Json | null = null;
  arrayAt(client.input, 'input').forEach((raw, i) => {
    const path = `input[${i}]`;
    const item = objectAt(raw, path);
    const type = item.type ?? 'message';
    switch (type) {
      case 'message': {
        const m = messageOf(item, path);
        turn = m.role === 'assistant' ? m : null;
        out.push(m);
        break;
      }
      case 'function_call': {
        const call = {
          id: stringAt(item.call_id, `${path}.call_id`),
          type: 'function',
          function: { name: flatName(stringAt(item.name, `${path}.name`), item.namespace), arguments: stringAt(item.arguments ?? '{}', `${path}.arguments`) },
        };
        if (!turn) out.push((turn = { role: 'assistant', content: null }));
        turn.tool_calls = [...(Array.isArray(turn.tool_calls) ? turn.tool_calls : []), call];
        break;
      }
      case 'function_call_output':
        turn = null;
        out.push({ role: 'tool', tool_call_id: stringAt(item.call_id, `${path}.call_id`), content: toolOutput(item.output, `${path}.output`) });
        break;
      case 'reasoning':
        break; // earlier turns' reasoning: dropped (see the header)
      default:
        throw unsupported(path, `an input item of type ${String(type)} ${NEEDS_RESPONSES}`);
    }
  });
  return out;
}

function messageOf(item: Json, path: string): Json {
  const role = item.role;
  const content = item.content;
  switch (role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: textOf(content, `${path}.content`).join('\n\n') };
    case 'assistant':
      return { role: 'assistant', content: textOf(content, `${path}.content`).join('') };
    case 'user':
      return { role: 'user', content: userContent(content, `${path}.content`) };
    default:
      throw invalid(`${path}.role`, `must be user, assistant, system or developer (got ${String(role)})`);
  }
}

/** Text of a message: a string, or input_text / output_text / refusal parts. */
function textOf(content: unknown, path: string): string[] {
  if (typeof content === 'string') return [content];
  return blocksAt(content, path).map((p, i) => {
    if (p.type === 'input_text' || p.type === 'output_text') return stringAt(p.text, `${path}[${i}].text`);
    if (p.type === 'refusal') return stringAt(p.refusal, `${path}[${i}].refusal`);
    throw unsupported(`${path}[${i}]`, `a ${String(p.type)} part is not allowed here`);
  });
}

function userContent(content: unknown, path: string): unknown {
  if (typeof content === 'string') return content;
  const parts = blocksAt(content, path).map((p, i) => partOf(p, `${path}[${i}]`));
  const only = parts.length === 1 ? parts[0] : undefined;
  return only?.type === 'text' ? only.text : parts;
}

function partOf(p: Json, path: string): Json {
  switch (p.type) {
    case 'input_text':
      return { type: 'text', text: stringAt(p.text, `${path}.text`) };
    case 'input_image': {
      if (typeof p.image_url !== 'string') throw unsupported(path, `an image by file id ${NEEDS_RESPONSES}: send image_url (a URL or a data URL)`);
      const image: Json = { url: p.image_url };
      if (typeof p.detail === 'string') image.detail = p.detail;
      return { type: 'image_url', image_url: image };
    }
    case 'input_file': {
      if (typeof p.file_data !== 'string') throw unsupported(path, `a file by id or URL ${NEEDS_RESPONSES}: send file_data`);
      const file: Json = { file_data: p.file_data };
      if (typeof p.filename === 'string') file.filename = p.filename;
      return { type: 'file', file };
    }
    default:
      throw unsupported(path, `content of type ${String(p.type)} ${NEEDS_RESPONSES}`);
  }
}

/** A function call's output: a string, or text parts (joined). */
function toolOutput(output: unknown, path: string): string {
  if (typeof output === 'string') return output;
  return blocksAt(output, path)
    .map((p, i) => {
      if (p.type === 'input_text') return stringAt(p.text, `${path}[${i}].text`);
      throw unsupported(`${path}[${i}]`, `a ${String(p.type)} part in a function call output ${NEEDS_RESPONSES}`);
    })
    .join('\n');
}
