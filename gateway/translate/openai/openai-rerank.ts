// Rerank client (/v1/rerank, /cohere/v2/rerank) -> an upstream of the shape Cohere v2, Jina and vLLM share (POST
// {baseUrl}/rerank with model, query, documents, top_n): a pass-through apart from the model name. Usage: the tokens
// the upstream reports (Jina, vLLM: usage.total_tokens; Cohere: meta.billed_units.input_tokens when it says), and
// its search units as the output count (Cohere: meta.billed_units.search_units; the others bill none, so one unit
// per 100 documents is counted, Cohere's rule), priced per unit by the route. Every answer says the search units
// counted in meta.billed_units.search_units, as Cohere's does. A target with rerankApi voyage speaks Voyage AI's
// shape instead (openai-rerank-voyage.ts).
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { openAIErrorMessage } from './openai-usage.ts';
import { voyageRequest, voyageAnswer } from './openai-rerank-voyage.ts';
import { safeJson, tokenCount, type StreamTranslator, type Translation, type UpstreamRequest, type Usage } from '../types.ts';

type Body = Record<string, unknown>;

/** Documents one search unit covers (Cohere's billing: a query over up to 100 documents). */
export const DOCUMENTS_PER_SEARCH_UNIT = 100;

interface RerankAnswer {
  usage?: { total_tokens?: unknown; prompt_tokens?: unknown } | null;
  meta?: { billed_units?: { search_units?: unknown; input_tokens?: unknown } | null; tokens?: { input_tokens?: unknown } | null } | null;
}

/** Tokens and search units of a parsed rerank answer; `documents` gives the units when the upstream bills none. */
export function rerankUsageOf(answer: unknown, documents: number, tokensPriced: boolean): Usage {
  const a = (answer !== null && typeof answer === 'object' ? answer : {}) as RerankAnswer;
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

/** Tokens and search units of a serialized rerank answer. */
export function rerankUsage(body: string, documents: number, tokensPriced: boolean): Usage {
  return rerankUsageOf(safeJson(body), documents, tokensPriced);
}

/**
 * The answer as the client gets it: the served model where the upstream named one, and the search units counted in
 * meta.billed_units.search_units (Cohere's field) where the upstream wrote none. A body that is not an object is
 * passed on as it came.
 */
export function rerankClientBody(answer: unknown, raw: string, servedModel: string, units: number): string {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return raw;
  const a = answer as Body;
  const meta = (a.meta !== null && typeof a.meta === 'object' ? a.meta : {}) as Body;
  const billed = (meta.billed_units !== null && typeof meta.billed_units === 'object' ? meta.billed_units : {}) as Body;
  const out: Body = { ...a, meta: { ...meta, billed_units: { ...billed, search_units: tokenCount(billed.search_units) ?? units } } };
  if ('model' in a) out.model = servedModel;
  return JSON.stringify(out);
}

export function rerankPassThrough(client: Body): Translation {
  const documents = Array.isArray(client.documents) ? client.documents.length : 0;
  // The model and wire shape of the latest request built (a fallback builds its own before its answer is read).
  let tokensPriced = true;
  let voyage = false;
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      tokensPriced = model.inputNanoPerToken > 0;
      voyage = target.rerankApi === 'voyage';
      if (voyage) return { operation: 'rerank', body: JSON.stringify(voyageRequest(client, target.upstreamModel)), stream: false, headers: {} };
      const { metadata: _m, ...rest } = client;
      return { operation: 'rerank', body: JSON.stringify({ ...rest, model: target.upstreamModel }), stream: false, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      const parsed = safeJson(upstreamBody);
      const answer = voyage ? voyageAnswer(parsed, client) : parsed;
      const usage = rerankUsageOf(answer, documents, tokensPriced);
      return { body: rerankClientBody(answer, upstreamBody, servedModel, usage.outputTokens), usage };
    },
    stream(): StreamTranslator {
      throw new Error('rerank does not stream');
    },
    errorMessage: openAIErrorMessage,
  };
}
