// The most search units a rerank can be billed: Cohere's rule (a search unit is one query over up to 100
// documents; a document longer than 500 tokens, query included, counts once per 500-token chunk), with tokens bounded
// by bytes (no tokenizer yields more tokens than bytes). The hold and the settled charge are held to it (estimate.ts).
import { MAX_AMOUNT } from '../state/store.ts';

export const CHUNK_TOKENS = 500;
export const DOCUMENTS_PER_UNIT = 100;

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

function textOf(doc: unknown): string {
  if (typeof doc === 'string') return doc;
  // A document object (Jina, Cohere v1) is read whole: every field may reach the ranker.
  return JSON.stringify(doc) ?? '';
}

export function searchUnitsBound(query: string, documents: readonly unknown[]): number {
  const q = bytes(query);
  let chunks = 0;
  for (const d of documents) chunks += Math.max(1, Math.ceil((bytes(textOf(d)) + q) / CHUNK_TOKENS));
  return Math.min(Math.ceil(chunks / DOCUMENTS_PER_UNIT), MAX_AMOUNT);
}
