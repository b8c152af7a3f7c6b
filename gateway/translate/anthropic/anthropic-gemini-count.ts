// count_tokens for an Anthropic client whose model a Gemini upstream serves: Gemini's own countTokens method
// (operation count_tokens; the provider builds `.../models/{model}:countTokens`), so the count is the model's
// tokenizer's, not an estimate. The request is the one anthropic-gemini-request.ts builds for the same body (what
// it refuses, count_tokens refuses too): Vertex AI counts `{contents, systemInstruction, tools}` (as @google/genai
// sends them); the Gemini API counts system prompt and tools only inside `generateContentRequest` (with the model
// named `models/<id>`), which is what is sent there. `{totalTokens}` -> `{input_tokens}`; an answer without a count
// falls back to the gateway's estimate. Free, as Anthropic's own count_tokens is.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { toGeminiFromMessages } from './anthropic-gemini-request.ts';
import { estimateInputTokens } from '../count-tokens.ts';
import { geminiErrorMessage } from '../gemini/gemini-usage.ts';
import { isObject, type Json } from '../json-read.ts';
import { NO_USAGE, safeJson, tokenCount, type StreamTranslator, type Translation, type UpstreamRequest } from '../types.ts';

export function anthropicCountTokensFromGemini(client: Json): Translation {
  return {
    dialect: 'anthropic',
    protocol: 'gemini',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      const { contents, systemInstruction, tools, toolConfig, generationConfig } = toGeminiFromMessages(client, target, model);
      const counted: Json = { contents, ...(systemInstruction ? { systemInstruction } : {}), ...(tools ? { tools } : {}) };
      const body =
        target.provider === 'vertex'
          ? counted
          : { generateContentRequest: { model: `models/${target.upstreamModel}`, ...counted, ...(toolConfig ? { toolConfig } : {}), generationConfig } };
      return { operation: 'count_tokens', body: JSON.stringify(body), stream: false, headers: {} };
    },
    response(upstreamBody: string) {
      const r = safeJson(upstreamBody);
      const total = isObject(r) ? tokenCount(r.totalTokens) : null;
      return { body: JSON.stringify({ input_tokens: total ?? estimateInputTokens(client) }), usage: NO_USAGE };
    },
    stream(): StreamTranslator {
      throw new Error('count_tokens does not stream');
    },
    errorMessage: geminiErrorMessage,
  };
}
