// Where a Bedrock call goes: the runtime endpoint of the target's region (or its baseUrl override) and the path of
// the operation. Which API serves a target is decided by its model id alone (see isAnthropicModel).
import type { CompiledTarget } from '../../contract/snapshot.ts';
import type { Operation, Protocol } from '../types.ts';

/**
 * Claude goes through Invoke (the Anthropic Messages body, so cache and thinking fields pass intact); every other model
 * through Converse. A model id is Anthropic's when it names `anthropic.` as a whole segment: the foundation model id
 * (`anthropic.claude-sonnet-4-5-20250929-v1:0`), a cross-region inference profile id (`us.anthropic.claude-...`,
 * `global.anthropic.claude-...`) or an ARN naming one (`arn:aws:bedrock:...:foundation-model/anthropic.claude-...`,
 * `...:inference-profile/us.anthropic.claude-...`). An application inference profile ARN names no model: it goes
 * through Converse, which serves Claude too.
 */
export function isAnthropicModel(modelId: string): boolean {
  return /(?:^|[./:])anthropic\./.test(modelId);
}

export function bedrockProtocol(target: CompiledTarget): Protocol {
  return isAnthropicModel(target.upstreamModel) ? 'anthropic' : 'converse';
}

export function runtimeBase(target: CompiledTarget): string {
  if (target.baseUrl) return target.baseUrl.replace(/\/+$/, '');
  return `https://bedrock-runtime.${target.region ?? 'us-east-1'}.amazonaws.com`;
}

export type BedrockAction = 'converse' | 'converse-stream' | 'invoke' | 'invoke-with-response-stream' | 'count-tokens' | 'rerank';

/** The Bedrock action of one call, or undefined when Bedrock has none for the operation. */
export function actionOf(protocol: Protocol, operation: Operation, stream: boolean): BedrockAction | undefined {
  // Embeddings and image generation (Titan, Nova Canvas) are InvokeModel calls in the model's own body.
  if (operation === 'embeddings' || operation === 'images') return 'invoke';
  if (operation === 'rerank') return protocol === 'converse' ? 'rerank' : undefined;
  if (protocol === 'anthropic') {
    if (operation === 'messages') return stream ? 'invoke-with-response-stream' : 'invoke';
    if (operation === 'count_tokens') return 'count-tokens';
    return undefined;
  }
  if (protocol === 'converse' && operation === 'chat') return stream ? 'converse-stream' : 'converse';
  if (protocol === 'converse' && operation === 'count_tokens') return 'count-tokens';
  return undefined;
}

/**
 * Rerank is an Agent Runtime API (POST /rerank on bedrock-agent-runtime.{region}, the model named in the body); a
 * baseUrl overrides that endpoint too.
 */
export function agentRuntimeBase(target: CompiledTarget): string {
  if (target.baseUrl) return target.baseUrl.replace(/\/+$/, '');
  return `https://bedrock-agent-runtime.${target.region ?? 'us-east-1'}.amazonaws.com`;
}

/** The model id is one path segment: ARNs and ids with `:` are URL-encoded whole. */
export function actionUrl(target: CompiledTarget, action: BedrockAction): string {
  if (action === 'rerank') return `${agentRuntimeBase(target)}/rerank`;
  return `${runtimeBase(target)}/model/${encodeURIComponent(target.upstreamModel)}/${action}`;
}
