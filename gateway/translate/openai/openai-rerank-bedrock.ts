// Rerank client (/v1/rerank, /cohere/v2/rerank) -> Bedrock's rerank models (amazon.rerank-v1:0, cohere.rerank-v3-5:0)
// through the Bedrock Agent Runtime Rerank API (POST /rerank: one text query, inline text sources, the model by
// ARN). Its answer (results[{index, relevanceScore}]) becomes Cohere's shape (results[{index, relevance_score,
// document?: {text}}]), the documents taken from the call itself when it asks for them. Bedrock reports no usage: it
// bills per query, a query covering up to 100 documents, which is one search unit (Cohere's rule, openai-rerank.ts).
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { converseErrorMessage } from '../converse/converse-usage.ts';
import { rerankClientBody, rerankUsageOf } from './openai-rerank.ts';
import { documentText, unsupportedRerankField } from './rerank-fields.ts';
import { safeJson, type StreamTranslator, type Translation, type UpstreamRequest } from '../types.ts';

type Body = Record<string, unknown>;

/** The model's ARN: an ARN as given, else the foundation model of the target's region. */
export function rerankModelArn(target: CompiledTarget): string {
  const m = target.upstreamModel;
  if (m.startsWith('arn:')) return m;
  return `arn:aws:bedrock:${target.region ?? 'us-east-1'}::foundation-model/${m}`;
}

export function bedrockRerankRequest(client: Body, target: CompiledTarget): Body {
  unsupportedRerankField(client, 'max_tokens_per_doc', 'Bedrock');
  const docs = Array.isArray(client.documents) ? client.documents : [];
  const topN = typeof client.top_n === 'number' ? Math.min(client.top_n, docs.length) : docs.length;
  return {
    queries: [{ type: 'TEXT', textQuery: { text: client.query } }],
    sources: docs.map((d) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: documentText(d) } } })),
    rerankingConfiguration: {
      type: 'BEDROCK_RERANKING_MODEL',
      bedrockRerankingConfiguration: { modelConfiguration: { modelArn: rerankModelArn(target) }, numberOfResults: topN },
    },
  };
}

/** Bedrock's answer in Cohere's shape (one without a results list is passed on as it came). */
export function bedrockRerankAnswer(parsed: unknown, client: Body): unknown {
  const results = (parsed as { results?: unknown } | null | undefined)?.results;
  if (!Array.isArray(results)) return parsed;
  const docs = Array.isArray(client.documents) ? client.documents : [];
  const withDocs = client.return_documents === true;
  return {
    results: (results as Array<Record<string, unknown>>).map((r) => {
      const doc = typeof r.index === 'number' ? docs[r.index] : undefined;
      return { index: r.index, relevance_score: r.relevanceScore, ...(withDocs && doc !== undefined ? { document: { text: documentText(doc) } } : {}) };
    }),
  };
}

export function rerankFromBedrock(client: Body): Translation {
  const documents = Array.isArray(client.documents) ? client.documents.length : 0;
  let tokensPriced = true;
  return {
    dialect: 'openai',
    protocol: 'converse',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      tokensPriced = model.inputNanoPerToken > 0;
      return { operation: 'rerank', body: JSON.stringify(bedrockRerankRequest(client, target)), stream: false, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      const answer = bedrockRerankAnswer(safeJson(upstreamBody), client);
      const usage = rerankUsageOf(answer, documents, tokensPriced);
      return { body: rerankClientBody(answer, upstreamBody, servedModel, usage.outputTokens), usage };
    },
    stream(): StreamTranslator {
      throw new Error('rerank does not stream');
    },
    errorMessage: converseErrorMessage,
  };
}
