// Rerank client (/v1/rerank, /cohere/v2/rerank) -> an upstream of the shape Cohere v2, Jina and vLLM share (POST
// {baseUrl}/rerank with model, query, documents, top_n): a pass-through apart from the model name. Usage: the tokens
// the upstream reports (Jina, vLLM: usage.total_tokens; Cohere: meta.billed_units.input_tokens when it says), and
// its search units as the output count (Cohere: meta.billed_units.search_units; the others bill none, so one unit
// per 100 documents is counted, Cohere's rule), priced per unit by the route.
import type { CompiledModel, CompiledTarget } from '../contract/snapshot.ts';
import { rewriteModel } from './json-splice.ts';
import { openAIErrorMessage } from './openai-usage.ts';
import { safeJson, tokenCount, type StreamTranslator, type Translation, type UpstreamRequest, type Usage } from './types.ts';

type Body = Record<string, unknown>;

/** Documents one search unit covers (Cohere's billing: a query over up to 100 documents). */
export const DOCUMENTS_PER_SEARCH_UNIT = 100;

interface RerankAnswer {
  usage?: { total_tokens?: unknown; prompt_tokens?: unknown } | null;
  meta?: { billed_units?: { search_units?: unknown; input_tokens?: unknown } | null; tokens?: { input_tokens?: unknown } | null } | null;
}

/** Tokens and search units of a rerank answer; `documents` gives the units when the upstream bills none. */
export function rerankUsage(body: string, documents: number, tokensPriced: boolean): Usage {
  const a = (safeJson(body) ?? {}) as RerankAnswer;
  const tokens =
    tokenCount(a.usage?.total_tokens) ??
    tokenCount(a.usage?.prompt_tokens) ??
    tokenCount(a.meta?.billed_units?.input_tokens) ??
    tokenCount(a.meta?.tokens?.input_tokens);
  const units = tokenCount(a.meta?.billed_units?.search_units) ?? Math.ceil(documents / DOCUMENTS_PER_SEARCH_UNIT);
  const usage: Usage = { inputTokens: tokens ?? 0, outputTokens: units, cacheReadTokens: 0, cacheWriteTokens: 0 };
  // Tokens the route prices but the upstream did not count are estimated from the request (settle.ts).
  if (tokens === null && tokensPriced) usage.inputMissing = true;
  return usage;
}

export function rerankPassThrough(client: Body): Translation {
  const documents = Array.isArray(client.documents) ? client.documents.length : 0;
  // The model of the latest request built (a fallback builds its own before its answer is read).
  let tokensPriced = true;
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      tokensPriced = model.inputNanoPerToken > 0;
      const { metadata: _m, ...rest } = client;
      return { operation: 'rerank', body: JSON.stringify({ ...rest, model: target.upstreamModel }), stream: false, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      return { body: rewriteModel(upstreamBody, servedModel), usage: rerankUsage(upstreamBody, documents, tokensPriced) };
    },
    stream(): StreamTranslator {
      throw new Error('rerank does not stream');
    },
    errorMessage: openAIErrorMessage,
  };
}
