// Anthropic Messages request -> Gemini generateContent request (the body only; see anthropic-gemini.ts).
// system -> systemInstruction; user and assistant turns -> contents (user, model), consecutive turns of one role
// merged; text, image and document blocks -> text, inlineData or fileData parts (gemini-request.ts); tool_use ->
// functionCall parts, tool_result -> functionResponse parts named by the call they answer (is_error -> `{error}`),
// the images a tool returned following as inlineData parts of the same turn; max_tokens -> maxOutputTokens (the
// model's maxOutputTokens when absent), temperature, top_p, top_k, stop_sequences; thinking with a budget ->
// thinkingConfig.thinkingBudget; output_config.format json_schema -> responseMimeType + responseJsonSchema.
// Dropped (hints that do not change the conversation): cache_control, metadata, service_tier, context_management,
// output_config.effort, disable_parallel_tool_use, tool hints (strict, defer_loading, ...), thinking disabled or
// adaptive, and thinking/redacted_thinking blocks of earlier turns (their signatures are Anthropic's; Gemini cannot
// read them). Refused: server tools, MCP servers, containers, blocks Gemini cannot receive.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import {
  CallNames,
  functionCallPart,
  functionDeclaration,
  functionResponsePart,
  inlinePart,
  mediaPart,
  NO_GEMINI,
  stopSequences,
  toolConfig,
  Turns,
} from '../gemini/gemini-request.ts';
import { arrayAt, blocksAt, isObject, objectAt, optionalString, stringAt, unsupported, type Json } from '../json-read.ts';

export function toGeminiFromMessages(client: Json, target: CompiledTarget, model: CompiledModel): Json {
  refuseAnthropicOnly(client);
  const turns = new Turns();
  const names = new CallNames();
  arrayAt(client.messages, 'messages').forEach((raw, i) => {
    const m = objectAt(raw, `messages[${i}]`);
    const path = `messages[${i}].content`;
    if (m.role === 'user') turns.push('user', userParts(m.content, path, target, names));
    else if (m.role === 'assistant') turns.push('model', assistantParts(m.content, path, names));
    else throw unsupported(`messages[${i}].role`, `the role ${String(m.role)} is not known`);
  });
  const out: Json = { contents: turns.done('messages') };
  if (client.system !== undefined && client.system !== null) {
    const system = systemTexts(client.system, 'system').filter((t) => t !== '');
    if (system.length > 0) out.systemInstruction = { parts: system.map((text) => ({ text })) };
  }
  const tools = Array.isArray(client.tools) ? client.tools.map((t, i) => declarationOf(t, `tools[${i}]`)) : [];
  if (tools.length > 0) {
    out.tools = [{ functionDeclarations: tools }];
    const choice = toolChoiceOf(client.tool_choice);
    if (choice) out.toolConfig = choice;
  }
  out.generationConfig = generationConfigOf(client, model);
  return out;
}

function refuseAnthropicOnly(client: Json): void {
  if (Array.isArray(client.mcp_servers) && client.mcp_servers.length > 0) throw unsupported('mcp_servers', `MCP servers ${NO_GEMINI}`);
  if (client.container !== undefined && client.container !== null) throw unsupported('container', `containers ${NO_GEMINI}`);
}

function generationConfigOf(client: Json, model: CompiledModel): Json {
  const g: Json = { maxOutputTokens: typeof client.max_tokens === 'number' ? client.max_tokens : model.maxOutputTokens };
  if (typeof client.temperature === 'number') g.temperature = client.temperature;
  if (typeof client.top_p === 'number') g.topP = client.top_p;
  if (typeof client.top_k === 'number') g.topK = client.top_k;
  if (Array.isArray(client.stop_sequences) && client.stop_sequences.length > 0) g.stopSequences = stopSequences(client.stop_sequences, 'stop_sequences');
  const thinking = isObject(client.thinking) ? client.thinking : undefined;
  if (thinking?.type === 'enabled' && typeof thinking.budget_tokens === 'number') g.thinkingConfig = { thinkingBudget: thinking.budget_tokens };
  const format = isObject(client.output_config) ? client.output_config.format : undefined;
  if (isObject(format) && format.type === 'json_schema') {
    g.responseMimeType = 'application/json';
    g.responseJsonSchema = objectAt(format.schema, 'output_config.format.schema');
  }
  return g;
}

/** System text: a string, or text blocks (their cache_control dropped). */
function systemTexts(content: unknown, path: string): string[] {
  if (typeof content === 'string') return [content];
  return blocksAt(content, path).map((b, i) => {
    if (b.type !== 'text') throw unsupported(`${path}[${i}]`, `a system prompt holds text blocks only, not ${String(b.type)}`);
    return stringAt(b.text, `${path}[${i}].text`);
  });
}

function userParts(content: unknown, path: string, target: CompiledTarget, names: CallNames): Json[] {
  if (typeof content === 'string') return [{ text: content }];
  const parts: Json[] = [];
  blocksAt(content, path).forEach((b, i) => {
    const where = `${path}[${i}]`;
    switch (b.type) {
      case 'text':
        parts.push({ text: stringAt(b.text, `${where}.text`) });
        break;
      case 'image':
      case 'document':
        parts.push(sourcePart(b, where, target));
        break;
      case 'tool_result':
        parts.push(...toolResultParts(b, where, target, names));
        break;
      default:
        throw unsupported(where, `a ${String(b.type)} block ${NO_GEMINI}`);
    }
  });
  return parts;
}

/** An image or document source: base64 -> inlineData, url -> fileData (Vertex), plain text -> a text part. */
function sourcePart(b: Json, path: string, target: CompiledTarget): Json {
  const source = objectAt(b.source, `${path}.source`);
  switch (source.type) {
    case 'base64':
      return inlinePart(stringAt(source.media_type, `${path}.source.media_type`), stringAt(source.data, `${path}.source.data`));
    case 'url':
      return mediaPart(stringAt(source.url, `${path}.source.url`), target, `${path}.source.url`);
    case 'text':
      if (b.type === 'document') return { text: stringAt(source.data, `${path}.source.data`) };
      break;
  }
  throw unsupported(`${path}.source`, `a ${String(b.type)} source of type ${String(source.type)} ${NO_GEMINI}`);
}

/** A tool_result -> its functionResponse part (text joined) and the images it returned as parts after it. */
function toolResultParts(b: Json, path: string, target: CompiledTarget, names: CallNames): Json[] {
  const id = stringAt(b.tool_use_id, `${path}.tool_use_id`);
  const name = names.nameOf(id, `${path}.tool_use_id`);
  const texts: string[] = [];
  const media: Json[] = [];
  if (typeof b.content === 'string') texts.push(b.content);
  else if (b.content !== undefined && b.content !== null) {
    blocksAt(b.content, `${path}.content`).forEach((c, i) => {
      const where = `${path}.content[${i}]`;
      if (c.type === 'text') texts.push(stringAt(c.text, `${where}.text`));
      else if (c.type === 'image' || c.type === 'document') media.push(sourcePart(c, where, target));
      else throw unsupported(where, `a ${String(c.type)} block in a tool result ${NO_GEMINI}`);
    });
  }
  return [functionResponsePart(name, id, texts.join('\n'), b.is_error === true), ...media];
}

function assistantParts(content: unknown, path: string, names: CallNames): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const parts: Json[] = [];
  blocksAt(content, path).forEach((b, i) => {
    const where = `${path}[${i}]`;
    switch (b.type) {
      case 'text': {
        const text = stringAt(b.text, `${where}.text`);
        if (text !== '') parts.push({ text });
        break;
      }
      case 'tool_use': {
        const id = stringAt(b.id, `${where}.id`);
        const name = stringAt(b.name, `${where}.name`);
        names.add(id, name);
        parts.push(functionCallPart(name, b.input === undefined ? {} : objectAt(b.input, `${where}.input`), id));
        break;
      }
      case 'thinking':
      case 'redacted_thinking':
        break;
      default:
        throw unsupported(where, `a ${String(b.type)} block ${NO_GEMINI}`);
    }
  });
  return parts;
}

function declarationOf(raw: unknown, path: string): Json {
  const t = objectAt(raw, path);
  if (t.type !== undefined && t.type !== null && t.type !== 'custom') throw unsupported(path, `the server tool ${String(t.type)} ${NO_GEMINI}`);
  return functionDeclaration(stringAt(t.name, `${path}.name`), `${path}.name`, optionalString(t.description, `${path}.description`), t.input_schema);
}

/** auto/any/tool/none -> AUTO/ANY/ANY with that one function allowed/NONE. */
function toolChoiceOf(choice: unknown): Json | null {
  if (!isObject(choice)) return null;
  switch (choice.type) {
    case 'auto':
      return toolConfig('AUTO');
    case 'any':
      return toolConfig('ANY');
    case 'none':
      return toolConfig('NONE');
    case 'tool':
      return toolConfig('ANY', stringAt(choice.name, 'tool_choice.name'));
    default:
      throw unsupported('tool_choice.type', `the tool_choice ${String(choice.type)} is not known`);
  }
}
