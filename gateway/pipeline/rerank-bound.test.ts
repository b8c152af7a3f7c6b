import { describe, expect, it } from 'vitest';
import type { CompiledModel } from '../contract/snapshot.ts';
import { rerankUsage } from '../translate/openai/openai-rerank.ts';
import { chargedUsage } from './bound-usage.ts';
import { outputBound, reserve, type Demand } from './estimate.ts';
import { searchUnitsBound } from './rerank-bound.ts';

const rerank = (over: Partial<CompiledModel> = {}): CompiledModel => ({
  id: 'r',
  type: 'rerank',
  minTier: 0,
  inputNanoPerToken: 0,
  outputNanoPerToken: 2_000_000,
  maxOutputTokens: 4096,
  targets: [],
  fallbacks: [],
  ...over,
});
const demand = (over: Partial<Demand> = {}): Demand => ({ inputBytes: 100, extraInputTokens: 0, maxTokens: 0, choices: 1, ...over });

describe('searchUnitsBound: the most search units a rerank can be billed', () => {
  it.each<[string, string, unknown[], number]>([
    ['one short document', 'q', ['d'], 1],
    ['100 short documents fill one unit', 'q', Array.from({ length: 100 }, () => 'd'), 1],
    ['101 take two', 'q', Array.from({ length: 101 }, () => 'd'), 2],
    // 1,000 bytes of document plus 1 of query: three 500-token chunks at most, so 100 of them are 300 chunks.
    ['long documents count once per 500-token chunk', 'q', Array.from({ length: 100 }, () => 'x'.repeat(1000)), 3],
    ['a document object is read whole', 'q', [{ text: 'x'.repeat(600) }], 1],
  ])('%s', (_name, query, documents, units) => {
    expect(searchUnitsBound(query, documents)).toBe(units);
  });
});

describe('a rerank hold and charge', () => {
  it('holds the input bound at the token price plus the search-unit bound at the unit price', () => {
    const r = reserve([rerank({ inputNanoPerToken: 50 })], demand({ searchUnits: 3 }));
    expect(r).toMatchObject({ inputTokens: 100, outputTokens: 3, holdNano: 100 * 50 + 3 * 2_000_000 });
  });

  it('moderation and embeddings hold no output; completions hold max_tokens x the candidates', () => {
    expect(outputBound(rerank({ type: 'moderation' }), demand({ choices: 4, maxTokens: 10 }))).toBe(0);
    expect(outputBound(rerank({ type: 'completions' }), demand({ choices: 4, maxTokens: 10 }))).toBe(40);
  });

  it('reads Cohere’s search units, Jina’s and vLLM’s tokens, and counts a unit per 100 documents where none is billed', () => {
    expect(rerankUsage('{"results":[],"meta":{"billed_units":{"search_units":2}}}', 150, false)).toMatchObject({ inputTokens: 0, outputTokens: 2 });
    expect(rerankUsage('{"results":[],"usage":{"total_tokens":42}}', 150, true)).toMatchObject({ inputTokens: 42, outputTokens: 2 });
    // Tokens priced but not reported: flagged, so settle estimates them from the request.
    expect(rerankUsage('{"results":[]}', 5, true)).toMatchObject({ inputTokens: 0, outputTokens: 1, inputMissing: true });
    expect(rerankUsage('{"results":[]}', 5, false).inputMissing).toBeUndefined();
  });

  it('never charges more search units than the hold assumed', () => {
    const reported = rerankUsage('{"results":[],"meta":{"billed_units":{"search_units":1000}}}', 3, false);
    const charged = chargedUsage(reported, { input: 100, output: outputBound(rerank(), demand({ searchUnits: 1 })) }, { input: 25, output: 10 });
    expect(charged.usage.outputTokens).toBe(1);
    expect(charged.clamped).toEqual(['output']);
  });
});
