// The URLs of Vertex AI and of the Gemini API for one target and one call. baseUrl, when set, replaces the origin
// (scheme, host, port) only: the paths are the services' own.
import type { CompiledTarget } from '../../contract/snapshot.ts';
import type { Operation } from '../types.ts';

export const GEMINI_API_ORIGIN = 'https://generativelanguage.googleapis.com';

/** Vertex's regional host, or the global one for location `global`. */
export function vertexOrigin(target: CompiledTarget): string {
  if (target.baseUrl) return target.baseUrl;
  const location = target.region ?? 'us-central1';
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

/** A model id as a path segment: encoded, except the `@` of versioned ids (claude-sonnet-4@20250514). */
function segment(id: string): string {
  return encodeURIComponent(id).replace(/%40/g, '@');
}

function vertexModels(target: CompiledTarget, publisher: 'google' | 'anthropic'): string {
  const project = segment(target.project ?? '');
  const location = segment(target.region ?? '');
  return `${vertexOrigin(target)}/v1/projects/${project}/locations/${location}/publishers/${publisher}/models`;
}

/** Claude on Vertex: rawPredict, streamRawPredict, and the count-tokens model for count_tokens. */
export function vertexClaudeUrl(target: CompiledTarget, operation: Operation, stream: boolean): string {
  const base = vertexModels(target, 'anthropic');
  if (operation === 'count_tokens') return `${base}/count-tokens:rawPredict`;
  return `${base}/${segment(target.upstreamModel)}:${stream ? 'streamRawPredict' : 'rawPredict'}`;
}

/** Gemini (and Google's embedding models) on Vertex. */
export function vertexGeminiUrl(target: CompiledTarget, operation: Operation, stream: boolean): string {
  const base = `${vertexModels(target, 'google')}/${segment(target.upstreamModel)}`;
  // Embeddings and Imagen's image generation are predict calls.
  if (operation === 'embeddings' || operation === 'images') return `${base}:predict`;
  return stream ? `${base}:streamGenerateContent?alt=sse` : `${base}:generateContent`;
}

/** The Gemini API (AI Studio). */
export function geminiApiUrl(target: CompiledTarget, operation: Operation, stream: boolean): string {
  const base = `${target.baseUrl ?? GEMINI_API_ORIGIN}/v1beta/models/${segment(target.upstreamModel)}`;
  if (operation === 'embeddings') return `${base}:batchEmbedContents`;
  if (operation === 'images') return `${base}:predict`;
  return stream ? `${base}:streamGenerateContent?alt=sse` : `${base}:generateContent`;
}
