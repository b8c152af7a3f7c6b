// What every Chat Completions -> other-protocol request translator (Anthropic, Converse, Gemini) reads the same way:
// the text of a message's content, the output cap, and the Chat-only features refused before admission.
import type { CompiledModel } from '../contract/snapshot.ts';
import { blocksAt, isObject, stringAt, unsupported, type Json } from './json-read.ts';

/** A string, or text and refusal parts (any other part is refused here, naming it); null or absent is no text. */
export function textOf(content: unknown, path: string): string[] {
  if (typeof content === 'string') return [content];
  if (content === null || content === undefined) return [];
  return blocksAt(content, path).map((p, i) => {
    if (p.type === 'text') return stringAt(p.text, `${path}[${i}].text`);
    if (p.type === 'refusal') return stringAt(p.refusal, `${path}[${i}].refusal`);
    throw unsupported(`${path}[${i}]`, `a ${String(p.type)} part is not allowed here`);
  });
}

/** The client's cap (max_completion_tokens, then max_tokens), else the route's: the cap the hold assumed. */
export function maxTokensOf(client: Json, model: CompiledModel): number {
  for (const v of [client.max_completion_tokens, client.max_tokens]) if (typeof v === 'number') return v;
  return model.maxOutputTokens;
}

/**
 * Refuses what only OpenAI's Chat Completions can do: n > 1, audio, legacy functions, web search, and (unless the
 * upstream has it: `jsonObject`) response_format json_object. `cannot` ends each message ("is not translated to …").
 */
export function refuseChatOnly(client: Json, cannot: string, opts: { jsonObject?: boolean } = {}): void {
  if (typeof client.n === 'number' && client.n > 1) throw unsupported('n', `several choices (n > 1) ${cannot}`);
  if (client.audio !== undefined && client.audio !== null) throw unsupported('audio', `audio output ${cannot}`);
  if (Array.isArray(client.modalities) && client.modalities.includes('audio')) throw unsupported('modalities', `audio output ${cannot}`);
  if (client.functions !== undefined || client.function_call !== undefined) throw unsupported('functions', 'legacy functions are not translated: use tools');
  if (!opts.jsonObject && isObject(client.response_format) && client.response_format.type === 'json_object') {
    throw unsupported('response_format', `json_object ${cannot}: use json_schema`);
  }
  if (client.web_search_options !== undefined) throw unsupported('web_search_options', `web search ${cannot}`);
}
