// Anthropic Messages request -> OpenAI Chat Completions request (the body only; see anthropic-openai.ts).
// Dropped (hints with no OpenAI equivalent that do not change the conversation): cache_control, top_k, thinking,
// output_config.effort, context_management, service_tier, metadata.user_id, defer_loading and other tool hints,
// thinking/redacted_thinking blocks of earlier assistant turns. Refused: content an OpenAI upstream cannot
// receive (documents, file references, server tools, MCP servers, containers).
import { arrayAt, blocksAt, isObject, objectAt, optionalString, stringAt, unsupported, type Json } from '../json-read.ts';

const NEEDS_ANTHROPIC = 'cannot be sent to an OpenAI-protocol upstream, which serves this model (it needs an Anthropic upstream)';

export function toOpenAIChat(client: Json, upstreamModel: string): Json {
  refuseAnthropicOnly(client);
  const out: Json = { model: upstreamModel, messages: messagesOf(client) };
  if (typeof client.max_tokens === 'number') out.max_completion_tokens = client.max_tokens;
  if (typeof client.temperature === 'number') out.temperature = client.temperature;
  if (typeof client.top_p === 'number') out.top_p = client.top_p;
  if (Array.isArray(client.stop_sequences) && client.stop_sequences.length > 0) out.stop = client.stop_sequences;
  if (client.stream === true) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  const tools = Array.isArray(client.tools) ? client.tools.map((t, i) => toolOf(t, `tools[${i}]`)) : [];
  if (tools.length > 0) {
    out.tools = tools;
    Object.assign(out, toolChoiceOf(client.tool_choice));
  }
  const format = isObject(client.output_config) ? client.output_config.format : undefined;
  if (isObject(format) && format.type === 'json_schema') {
    out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  }
  return out;
}

function refuseAnthropicOnly(client: Json): void {
  if (Array.isArray(client.mcp_servers) && client.mcp_servers.length > 0) throw unsupported('mcp_servers', `MCP servers ${NEEDS_ANTHROPIC}.`);
  if (client.container !== undefined && client.container !== null) throw unsupported('container', `containers ${NEEDS_ANTHROPIC}.`);
}

function messagesOf(client: Json): Json[] {
  const out: Json[] = [];
  if (client.system !== undefined) out.push({ role: 'system', content: systemText(client.system, 'system') });
  arrayAt(client.messages, 'messages').forEach((raw, i) => {
    const m = objectAt(raw, `messages[${i}]`);
    const path = `messages[${i}].content`;
    switch (m.role) {
      case 'system':
        out.push({ role: 'system', content: systemText(m.content, path) });
        break;
      case 'user':
        out.push(...userMessages(m.content, path));
        break;
      case 'assistant': {
        const a = assistantMessage(m.content, path);
        if (a) out.push(a);
        break;
      }
      default:
        throw unsupported(`messages[${i}].role`, `the role ${String(m.role)} is not known`);
    }
  });
  return out;
}

/** System text: a string, or text blocks joined by blank lines (their cache_control is dropped). */
function systemText(content: unknown, path: string): string {
  if (typeof content === 'string') return content;
  return blocksAt(content, path)
    .map((b, i) => {
      if (b.type !== 'text') throw unsupported(`${path}[${i}]`, `a system prompt holds text blocks only, not ${String(b.type)}`);
      return stringAt(b.text, `${path}[${i}].text`);
    })
    .join('\n\n');
}

/** One user turn: its tool results become `tool` messages (first, as OpenAI requires), the rest one user message. */
function userMessages(content: unknown, path: string): Json[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const tools: Json[] = [];
  const parts: Json[] = [];
  blocksAt(content, path).forEach((b, i) => {
    const where = `${path}[${i}]`;
    switch (b.type) {
      case 'text':
        parts.push({ type: 'text', text: stringAt(b.text, `${where}.text`) });
        break;
      case 'image':
        parts.push(imagePart(b, where));
        break;
      case 'tool_result': {
        const r = toolResult(b, where);
        tools.push(r.message);
        parts.push(...r.extra);
        break;
      }
      default:
        throw unsupported(where, `a ${String(b.type)} block ${NEEDS_ANTHROPIC}`);
    }
  });
  if (parts.length === 0) return tools;
  const only = parts.length === 1 ? parts[0] : undefined;
  return [...tools, { role: 'user', content: only?.type === 'text' ? only.text : parts }];
}

function imagePart(b: Json, path: string): Json {
  const source = objectAt(b.source, `${path}.source`);
  switch (source.type) {
    case 'base64': {
      const media = stringAt(source.media_type, `${path}.source.media_type`);
      return { type: 'image_url', image_url: { url: `data:${media};base64,${stringAt(source.data, `${path}.source.data`)}` } };
    }
    case 'url':
      return { type: 'image_url', image_url: { url: stringAt(source.url, `${path}.source.url`) } };
    default:
      throw unsupported(`${path}.source`, `an image source of type ${String(source.type)} ${NEEDS_ANTHROPIC}`);
  }
}

/**
 * A tool_result -> a `tool` message with its text. OpenAI tool messages carry no images, so images a tool returned
 * follow in the user message, announced by a line naming the call. is_error becomes an "Error: " prefix.
 */
function toolResult(b: Json, path: string): { message: Json; extra: Json[] } {
  const id = stringAt(b.tool_use_id, `${path}.tool_use_id`);
  const texts: string[] = [];
  const images: Json[] = [];
  if (typeof b.content === 'string') texts.push(b.content);
  else if (b.content !== undefined && b.content !== null) {
    blocksAt(b.content, `${path}.content`).forEach((c, i) => {
      const where = `${path}.content[${i}]`;
      if (c.type === 'text') texts.push(stringAt(c.text, `${where}.text`));
      else if (c.type === 'image') images.push(imagePart(c, where));
      else if (c.type === 'tool_reference') texts.push(`Tool ${stringAt(c.tool_name, `${where}.tool_name`)} is available.`);
      else throw unsupported(where, `a ${String(c.type)} block in a tool result ${NEEDS_ANTHROPIC}`);
    });
  }
  let text = texts.join('\n');
  if (images.length > 0 && text === '') text = '(the tool returned images; they follow in the next message)';
  if (b.is_error === true) text = `Error: ${text}`;
  const extra = images.length > 0 ? [{ type: 'text', text: `Images returned by tool call ${id}:` }, ...images] : [];
  return { message: { role: 'tool', tool_call_id: id, content: text }, extra };
}

/** An assistant turn: text and tool calls; thinking of earlier turns is dropped (see docs/api.md, Translation). */
function assistantMessage(content: unknown, path: string): Json | null {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const calls: Json[] = [];
  blocksAt(content, path).forEach((b, i) => {
    const where = `${path}[${i}]`;
    switch (b.type) {
      case 'text':
        texts.push(stringAt(b.text, `${where}.text`));
        break;
      case 'tool_use':
        calls.push({
          id: stringAt(b.id, `${where}.id`),
          type: 'function',
          function: { name: stringAt(b.name, `${where}.name`), arguments: JSON.stringify(b.input ?? {}) },
        });
        break;
      case 'thinking':
      case 'redacted_thinking':
        break;
      default:
        throw unsupported(where, `a ${String(b.type)} block ${NEEDS_ANTHROPIC}`);
    }
  });
  if (texts.length === 0 && calls.length === 0) return null;
  const out: Json = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (calls.length > 0) out.tool_calls = calls;
  return out;
}

function toolOf(raw: unknown, path: string): Json {
  const t = objectAt(raw, path);
  if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
    throw unsupported(path, `the server tool ${String(t.type)} ${NEEDS_ANTHROPIC}`);
  }
  const fn: Json = { name: stringAt(t.name, `${path}.name`) };
  const description = optionalString(t.description, `${path}.description`);
  if (description !== undefined) fn.description = description;
  fn.parameters = isObject(t.input_schema) ? t.input_schema : { type: 'object', properties: {} };
  if (t.strict === true) fn.strict = true;
  return { type: 'function', function: fn };
}

/** tool_choice auto/any/tool/none -> auto/required/function/none; disable_parallel_tool_use -> parallel_tool_calls. */
function toolChoiceOf(choice: unknown): Json {
  if (!isObject(choice)) return {};
  const out: Json = {};
  switch (choice.type) {
    case 'auto':
      out.tool_choice = 'auto';
      break;
    case 'any':
      out.tool_choice = 'required';
      break;
    case 'none':
      out.tool_choice = 'none';
      break;
    case 'tool':
      out.tool_choice = { type: 'function', function: { name: stringAt(choice.name, 'tool_choice.name') } };
      break;
    default:
      throw unsupported('tool_choice.type', `the tool_choice ${String(choice.type)} is not known`);
  }
  if (choice.disable_parallel_tool_use === true && choice.type !== 'none') out.parallel_tool_calls = false;
  return out;
}
