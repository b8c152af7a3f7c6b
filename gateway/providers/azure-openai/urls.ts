// The two URL shapes of Azure OpenAI: the v1 API (the deployment name in the body's model, no api-version) and the
// dated API (the deployment in the path, ?api-version=). The translators already put target.upstreamModel in `model`.
import type { CompiledTarget } from '../../contract/snapshot.ts';
import type { AudioOperation, Operation } from '../types.ts';

const V1_PATHS: Partial<Record<Operation, string>> = {
  chat: '/chat/completions',
  embeddings: '/embeddings',
  responses: '/responses',
  images: '/images/generations',
  image_edits: '/images/edits',
};
/** The dated API serves Responses only as a preview under another path: a dated target is never asked for it. */
const DATED_PATHS: Partial<Record<Operation, string>> = {
  chat: '/chat/completions',
  embeddings: '/embeddings',
  images: '/images/generations',
  image_edits: '/images/edits',
};

/** The resource endpoint, also when given with the /openai or /openai/v1 suffix the portal shows. */
export function resourceEndpoint(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/openai(\/v1)?$/, '');
}

export function azureUrl(target: CompiledTarget, operation: Operation): string {
  if (!target.baseUrl) throw new Error(`azure-openai target ${target.name} has no baseUrl`);
  const base = resourceEndpoint(target.baseUrl);
  if (target.apiVersion === undefined) {
    const path = V1_PATHS[operation];
    if (!path) throw new Error(`azure-openai cannot serve ${operation}`);
    return `${base}/openai/v1${path}`;
  }
  const path = DATED_PATHS[operation];
  if (!path) throw new Error(`azure-openai with apiVersion cannot serve ${operation}`);
  const deployment = encodeURIComponent(target.upstreamModel);
  return `${base}/openai/deployments/${deployment}${path}?api-version=${encodeURIComponent(target.apiVersion)}`;
}

/**
 * The audio endpoints: /openai/v1/audio/{operation} on the v1 API (the deployment in the body's model), or
 * /openai/deployments/{deployment}/audio/{operation}?api-version= on the dated API.
 */
export function azureAudioUrl(target: CompiledTarget, operation: AudioOperation): string {
  if (!target.baseUrl) throw new Error(`azure-openai target ${target.name} has no baseUrl`);
  const base = resourceEndpoint(target.baseUrl);
  if (target.apiVersion === undefined) return `${base}/openai/v1/audio/${operation}`;
  const deployment = encodeURIComponent(target.upstreamModel);
  return `${base}/openai/deployments/${deployment}/audio/${operation}?api-version=${encodeURIComponent(target.apiVersion)}`;
}
