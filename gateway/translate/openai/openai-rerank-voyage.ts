// Rerank in Voyage AI's shape (POST https://api.voyageai.com/v1/rerank): the client's Cohere-shaped call becomes
// Voyage's (top_n -> top_k, documents as strings, return_documents and truncation as given), and Voyage's answer
// (data[{index, relevance_score, document?}], usage.total_tokens) becomes Cohere's (results[{index, relevance_score,
// document?: {text}}]) with Voyage's usage kept. Voyage bills tokens; it has no per-document token cap.
import { documentText, unsupportedRerankField } from './rerank-fields.ts';

type Body = Record<string, unknown>;

export function voyageRequest(client: Body, upstreamModel: string): Body {
  unsupportedRerankField(client, 'max_tokens_per_doc', 'Voyage AI');
  const docs = Array.isArray(client.documents) ? client.documents : [];
  return {
    query: client.query,
    documents: docs.map(documentText),
    model: upstreamModel,
    ...(typeof client.top_n === 'number' ? { top_k: client.top_n } : {}),
    ...(typeof client.return_documents === 'boolean' ? { return_documents: client.return_documents } : {}),
    ...(typeof client.truncation === 'boolean' ? { truncation: client.truncation } : {}),
  };
}

interface VoyageAnswer {
  data?: unknown;
  model?: unknown;
  usage?: unknown;
}

/** Voyage's answer in Cohere's shape (an answer without a data list is passed on as it came). */
export function voyageAnswer(parsed: unknown, client: Body): unknown {
  const a = (parsed ?? {}) as VoyageAnswer;
  if (!Array.isArray(a.data)) return parsed;
  const withDocs = client.return_documents === true;
  const results = (a.data as Array<Record<string, unknown>>).map((r) => ({
    index: r.index,
    relevance_score: r.relevance_score,
    ...(withDocs && typeof r.document === 'string' ? { document: { text: r.document } } : {}),
  }));
  return { model: a.model ?? null, results, ...(a.usage !== undefined ? { usage: a.usage } : {}) };
}
