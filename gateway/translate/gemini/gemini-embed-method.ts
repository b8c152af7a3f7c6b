// Which of Google's embedding methods serves a target, by kind and model (as @google/genai chooses): the Gemini API's
// batchEmbedContents; on Vertex AI embedContent for the Gemini embedding models after gemini-embedding-001 and for
// partner (maas) models, one input per request, and predict for gemini-embedding-001 and the text-embedding models.
// The translator builds the body of that method and the provider the URL (`.../models/{model}:{method}`).
import type { CompiledTarget } from '../../contract/snapshot.ts';

export type GeminiEmbedMethod = 'batchEmbedContents' | 'embedContent' | 'predict';

export function geminiEmbedMethod(target: Pick<CompiledTarget, 'provider' | 'upstreamModel'>): GeminiEmbedMethod {
  if (target.provider !== 'vertex') return 'batchEmbedContents';
  const m = target.upstreamModel;
  return (m.includes('gemini') && m !== 'gemini-embedding-001') || m.includes('maas') ? 'embedContent' : 'predict';
}
