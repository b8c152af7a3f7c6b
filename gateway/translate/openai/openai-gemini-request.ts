// OpenAI Chat Completions request -> Gemini generateContent request (the body only; see openai-gemini.ts).
// System/developer messages -> systemInstruction (in order, wherever they stand); user and assistant turns ->
// contents with roles user and model, consecutive turns of one role merged; tool messages -> functionResponse parts
// of a user turn, named by the call they answer; max_tokens -> generationConfig.maxOutputTokens, which the gateway
// always sends (the model's maxOutputTokens when the client set none). seed and the penalties are sent as Gemini's.
// Dropped: reasoning_effort (Gemini 3 takes a thinkingLevel, Gemini 2.5 a thinkingBudget: no one value is exact
// for every model), parallel_tool_calls, logit_bias, logprobs, top_logprobs, user, safety_identifier, metadata,
// store, service_tier, prediction, prompt_cache_key, verbosity, strict. Refused: n > 1, audio output, legacy
// functions, web search, uploaded file ids, files by URL where Gemini fetches none (gemini-request.ts).
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import {
  argsObject,
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
import { maxTokensOf, refuseChatOnly, textOf } from '../chat-request.ts';

/** `contentPath` names the client's field that holds the conversation (messages; input for a Responses client). */
export function toGeminiFromChat(client: Json, target: CompiledTarget, model: CompiledModel, contentPath = 'messages'): Json {
  refuseChatOnly(client, NO_GEMINI, { jsonObject: true });
  const { system, turns } = contentsOf(arrayAt(client.messages, 'messages'), target);
  const out: Json = { contents: turns.done(contentPath) };
  if (system.length > 0) out.systemInstruction = { parts: system.map((text) => ({ text })) };
  const tools = Array.isArray(client.tools) ? client.tools.map((t, i) => declarationOf(t, `tools[${i}]`)) : [];
  if (tools.length > 0) {
    out.tools = [{ functionDeclarations: tools }];
    const choice = toolChoiceOf(client.tool_choice);
    if (choice) out.toolConfig = choice;
  }
  out.generationConfig = generationConfigOf(client, model);
  return out;
}

function generationConfigOf(client: Json, model: CompiledModel): Json {
  const g: Json = { maxOutputTokens: maxTokensOf(client, model) };
  if (typeof client.temperature === 'number') g.temperature = client.temperature;
  if (typeof client.top_p === 'number') g.topP = client.top_p;
  const stop = typeof client.stop === 'string' ? [client.stop] : Array.isArray(client.stop) ? client.stop : [];
  if (stop.length > 0) g.stopSequences = stopSequences(stop, 'stop');
  if (typeof client.seed === 'number') g.seed = client.seed;
  if (typeof client.presence_penalty === 'number') g.presencePenalty = client.presence_penalty;
  if (typeof client.frequency_penalty === 'number') g.frequencyPenalty = client.frequency_penalty;
  const format = isObject(client.response_format) ? client.response_format : undefined;
  if (format?.type === 'json_object') g.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    const schema = isObject(format.json_schema) ? format.json_schema.schema : undefined;
    g.responseMimeType = 'application/json';
    g.responseJsonSchema = objectAt(schema, 'response_format.json_schema.schema');
  }
  return g;
}

function contentsOf(list: unknown[], target: CompiledTarget): { system: string[]; turns: Turns } {
  const system: string[] = [];
  const turns = new Turns();
  const names = new CallNames();
  list.forEach((raw, i) => {
    const m = objectAt(raw, `messages[${i}]`);
    const path = `messages[${i}].content`;
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...textOf(m.content, path).filter((t) => t !== ''));
        break;
      case 'user':
        turns.push('user', userParts(m.content, path, target));
        break;
      case 'assistant':
        turns.push('model', assistantParts(m, `messages[${i}]`, names));
        break;
      case 'tool': {
        const id = stringAt(m.tool_call_id, `messages[${i}].tool_call_id`);
        const name = names.nameOf(id, `messages[${i}].tool_call_id`);
        turns.push('user', [functionResponsePart(name, id, textOf(m.content, path).join('\n'))]);
        break;
      }
      default:
        throw unsupported(`messages[${i}].role`, `the role ${String(m.role)} is not translated to Gemini`);
    }
  });
  return { system, turns };
}

const AUDIO: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3' };

function userParts(content: unknown, path: string, target: CompiledTarget): Json[] {
  if (typeof content === 'string') return [{ text: content }];
  return blocksAt(content, path).map((p, i) => {
    const where = `${path}[${i}]`;
    switch (p.type) {
      case 'text':
        return { text: stringAt(p.text, `${where}.text`) };
      case 'image_url': {
        const image = objectAt(p.image_url, `${where}.image_url`);
        return mediaPart(stringAt(image.url, `${where}.image_url.url`), target, `${where}.image_url.url`);
      }
      case 'input_audio': {
        const audio = objectAt(p.input_audio, `${where}.input_audio`);
        const mime = AUDIO[String(audio.format)];
        if (!mime) throw unsupported(`${where}.input_audio.format`, 'must be wav or mp3');
        return inlinePart(mime, stringAt(audio.data, `${where}.input_audio.data`));
      }
      case 'file': {
        const file = objectAt(p.file, `${where}.file`);
        if (typeof file.file_data !== 'string') throw unsupported(`${where}.file`, `an uploaded file (file_id) ${NO_GEMINI}: send file_data`);
        return mediaPart(file.file_data, target, `${where}.file.file_data`);
      }
      default:
        throw unsupported(where, `content of type ${String(p.type)} ${NO_GEMINI}`);
    }
  });
}

function assistantParts(m: Json, path: string, names: CallNames): Json[] {
  const parts: Json[] = textOf(m.content, `${path}.content`)
    .filter((t) => t !== '')
    .map((text) => ({ text }));
  if (m.tool_calls === undefined || m.tool_calls === null) return parts;
  arrayAt(m.tool_calls, `${path}.tool_calls`).forEach((raw, i) => {
    const where = `${path}.tool_calls[${i}]`;
    const c = objectAt(raw, where);
    const fn = objectAt(c.function, `${where}.function`);
    const id = stringAt(c.id, `${where}.id`);
    const name = stringAt(fn.name, `${where}.function.name`);
    names.add(id, name);
    parts.push(functionCallPart(name, argsObject(stringAt(fn.arguments ?? '{}', `${where}.function.arguments`), `${where}.function.arguments`), id));
  });
  return parts;
}

function declarationOf(raw: unknown, path: string): Json {
  const t = objectAt(raw, path);
  if (t.type !== 'function') throw unsupported(path, `a ${String(t.type)} tool ${NO_GEMINI}`);
  const fn = objectAt(t.function, `${path}.function`);
  return functionDeclaration(
    stringAt(fn.name, `${path}.function.name`),
    `${path}.function.name`,
    optionalString(fn.description, `${path}.function.description`),
    fn.parameters,
  );
}

/** auto/required/none/function -> AUTO/ANY/NONE/ANY with that one function allowed. */
function toolChoiceOf(choice: unknown): Json | null {
  if (choice === undefined || choice === null) return null;
  if (choice === 'auto') return toolConfig('AUTO');
  if (choice === 'required') return toolConfig('ANY');
  if (choice === 'none') return toolConfig('NONE');
  if (isObject(choice) && choice.type === 'function') {
    const fn = objectAt(choice.function, 'tool_choice.function');
    return toolConfig('ANY', stringAt(fn.name, 'tool_choice.function.name'));
  }
  throw unsupported('tool_choice', 'this tool_choice is not known');
}
