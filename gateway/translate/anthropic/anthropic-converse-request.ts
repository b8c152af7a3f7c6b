// Anthropic Messages request -> Bedrock Converse request (the body only; see anthropic-converse.ts), for the models
// Bedrock serves through Converse (Claude goes through Invoke, in Anthropic's own protocol). Consecutive turns of
// one role are merged (Converse requires alternating roles). Dropped (hints that do not change the conversation):
// cache_control, thinking (no model-independent Converse field: the model reasons as it does by default, as for
// an OpenAI-protocol upstream), metadata, service_tier, output_config.effort, context_management, disable_parallel_tool_use,
// tool hints other than strict, thinking/redacted_thinking blocks of earlier turns (only the model that wrote them
// reads them). Refused: top_k (no model-independent Converse field), images by URL (Bedrock fetches
// no URL), documents other than base64 PDFs, server tools, MCP servers, containers, tool_choice none on a
// conversation that holds tool calls.
import type { CompiledModel } from '../../contract/snapshot.ts';
import { alternating, imageOf, inferenceConfigOf, NO_CONVERSE, outputConfigOf, pdfOf, toolSpecOf, usesTools, type Turn } from '../converse/converse-blocks.ts';
import { arrayAt, blocksAt, isObject, objectAt, optionalString, stringAt, unsupported, type Json } from '../json-read.ts';

export function toConverseFromAnthropic(client: Json, model: CompiledModel): Json {
  refuseAnthropicOnly(client);
  const system = client.system === undefined || client.system === null ? [] : systemOf(client.system, 'system');
  const turns: Turn[] = [];
  arrayAt(client.messages, 'messages').forEach((raw, i) => {
    const m = objectAt(raw, `messages[${i}]`);
    const path = `messages[${i}].content`;
    // A system message inside `messages` (some clients send one): Converse has no system turn, it joins `system`.
    if (m.role === 'system') system.push(...systemOf(m.content, path));
    else if (m.role === 'user') turns.push({ role: 'user', content: blocksOf(m.content, path, 'user') });
    else if (m.role === 'assistant') turns.push({ role: 'assistant', content: blocksOf(m.content, path, 'assistant') });
    else throw unsupported(`messages[${i}].role`, `the role ${String(m.role)} is not known`);
  });
  const messages = alternating(turns);
  const out: Json = { messages };
  if (system.length > 0) out.system = system;
  const maxTokens = typeof client.max_tokens === 'number' ? client.max_tokens : model.maxOutputTokens;
  out.inferenceConfig = inferenceConfigOf(maxTokens, client.temperature, client.top_p, stopSequencesOfAnthropic(client));
  const tools = Array.isArray(client.tools) ? client.tools.map((t, i) => toolOf(t, `tools[${i}]`)) : [];
  const config = toolConfigOf(tools, client.tool_choice, usesTools(messages));
  if (config) out.toolConfig = config;
  const format = isObject(client.output_config) ? client.output_config.format : undefined;
  if (isObject(format) && format.type === 'json_schema') out.outputConfig = outputConfigOf(format.schema, 'output_config.format.schema');
  return out;
}

export function stopSequencesOfAnthropic(client: Json): string[] {
  return Array.isArray(client.stop_sequences) ? client.stop_sequences.filter((s): s is string => typeof s === 'string') : [];
}

function refuseAnthropicOnly(client: Json): void {
  if (typeof client.top_k === 'number') throw unsupported('top_k', `top_k ${NO_CONVERSE} (no model-independent field)`);
  if (Array.isArray(client.mcp_servers) && client.mcp_servers.length > 0) throw unsupported('mcp_servers', `MCP servers ${NO_CONVERSE}`);
  if (client.container !== undefined && client.container !== null) throw unsupported('container', `containers ${NO_CONVERSE}`);
}

/** System: a string, or text blocks (their cache_control dropped); blank text left out, Converse refuses it. */
function systemOf(content: unknown, path: string): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  return blocksAt(content, path).flatMap((b, i) => {
    if (b.type !== 'text') throw unsupported(`${path}[${i}]`, `a system prompt holds text blocks only, not ${String(b.type)}`);
    const text = stringAt(b.text, `${path}[${i}].text`);
    return text === '' ? [] : [{ text }];
  });
}

function blocksOf(content: unknown, path: string, role: 'user' | 'assistant'): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const out: Json[] = [];
  blocksAt(content, path).forEach((b, i) => {
    const where = `${path}[${i}]`;
    switch (b.type) {
      case 'text': {
        const text = stringAt(b.text, `${where}.text`);
        if (text !== '') out.push({ text });
        break;
      }
      case 'image':
        if (role === 'assistant') throw unsupported(where, 'an image in an assistant turn is not allowed');
        out.push(imageBlock(b, where));
        break;
      case 'document':
        if (role === 'assistant') throw unsupported(where, 'a document in an assistant turn is not allowed');
        out.push(documentBlock(b, where, i));
        break;
      case 'tool_result':
        if (role === 'assistant') throw unsupported(where, 'a tool_result belongs in a user turn');
        out.push(toolResult(b, where));
        break;
      case 'tool_use':
        if (role === 'user') throw unsupported(where, 'a tool_use belongs in an assistant turn');
        out.push({ toolUse: { toolUseId: stringAt(b.id, `${where}.id`), name: stringAt(b.name, `${where}.name`), input: isObject(b.input) ? b.input : {} } });
        break;
      case 'thinking':
      case 'redacted_thinking':
        if (role === 'user') throw unsupported(where, `a ${b.type} block belongs in an assistant turn`);
        break;
      default:
        throw unsupported(where, `a ${String(b.type)} block ${NO_CONVERSE}`);
    }
  });
  return out;
}

function imageBlock(b: Json, path: string): Json {
  const source = objectAt(b.source, `${path}.source`);
  if (source.type === 'base64')
    return imageOf(stringAt(source.media_type, `${path}.source.media_type`), stringAt(source.data, `${path}.source.data`), `${path}.source`);
  if (source.type === 'url') throw unsupported(`${path}.source`, 'Bedrock fetches no image URL: send the image as base64');
  throw unsupported(`${path}.source`, `an image source of type ${String(source.type)} ${NO_CONVERSE}`);
}

function documentBlock(b: Json, path: string, i: number): Json {
  const source = objectAt(b.source, `${path}.source`);
  if (source.type === 'base64' && source.media_type === 'application/pdf') {
    return pdfOf(stringAt(source.data, `${path}.source.data`), optionalString(b.title, `${path}.title`), `document ${i + 1}`);
  }
  throw unsupported(`${path}.source`, `only base64 PDF documents can be sent to a Bedrock Converse upstream`);
}

/** A tool_result -> a toolResult: text, images and PDFs in its content; is_error -> status error. */
function toolResult(b: Json, path: string): Json {
  const content: Json[] = [];
  if (typeof b.content === 'string') content.push({ text: b.content });
  else if (b.content !== undefined && b.content !== null) {
    blocksAt(b.content, `${path}.content`).forEach((c, i) => {
      const where = `${path}.content[${i}]`;
      if (c.type === 'text') content.push({ text: stringAt(c.text, `${where}.text`) });
      else if (c.type === 'image') content.push(imageBlock(c, where));
      else if (c.type === 'document') content.push(documentBlock(c, where, i));
      else throw unsupported(where, `a ${String(c.type)} block in a tool result ${NO_CONVERSE}`);
    });
  }
  const out: Json = { toolUseId: stringAt(b.tool_use_id, `${path}.tool_use_id`), content };
  if (b.is_error === true) out.status = 'error';
  return { toolResult: out };
}

function toolOf(raw: unknown, path: string): Json {
  const t = objectAt(raw, path);
  if (t.type !== undefined && t.type !== null && t.type !== 'custom') throw unsupported(path, `the server tool ${String(t.type)} ${NO_CONVERSE}`);
  return toolSpecOf(stringAt(t.name, `${path}.name`), optionalString(t.description, `${path}.description`), t.input_schema, t.strict);
}

/** tool_choice auto/any/tool -> {auto}/{any}/{tool}; none leaves the tools out (Converse has no none). */
function toolConfigOf(tools: Json[], choice: unknown, conversationUsesTools: boolean): Json | null {
  const type = isObject(choice) ? choice.type : undefined;
  if (type === 'none') {
    if (conversationUsesTools)
      throw unsupported(
        'tool_choice',
        'none cannot be sent to a Bedrock Converse upstream while the conversation holds tool calls (Converse has no none, and needs the tools then)',
      );
    return null;
  }
  if (tools.length === 0) return null;
  const out: Json = { tools };
  if (!isObject(choice)) return out;
  switch (type) {
    case 'auto':
      out.toolChoice = { auto: {} };
      break;
    case 'any':
      out.toolChoice = { any: {} };
      break;
    case 'tool':
      out.toolChoice = { tool: { name: stringAt(choice.name, 'tool_choice.name') } };
      break;
    default:
      throw unsupported('tool_choice.type', `the tool_choice ${String(type)} is not known`);
  }
  return out;
}
