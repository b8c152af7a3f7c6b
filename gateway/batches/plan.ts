// Where a batch runs and what it holds: the route's first target whose provider batches the endpoint (a batch goes
// to one upstream, no fallbacks: an upstream batch cannot move once submitted), and each line's worst case at the
// listed price as the per-call path computes it (pipeline/estimate.ts), summed.
import type { CompiledModel, CompiledTarget, Snapshot } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import { costBound, inputBound, outputBound, type Demand } from '../pipeline/estimate.ts';
import { resolveChain, type Principal } from '../pipeline/resolve.ts';
import { MAX_AMOUNT } from '../state/store.ts';
import type { BatchEndpoint, BatchLine } from './types.ts';

/** The endpoints each provider kind's batch API serves (the others have no batch API the gateway can use exactly). */
export function batches(target: CompiledTarget, endpoint: BatchEndpoint): boolean {
  switch (target.provider) {
    // Message Batches run there as Chat Completions batches, translated line by line (messages-over-openai.ts).
    case 'openai':
      return true;
    case 'azure-openai':
      return (
        endpoint === '/v1/chat/completions' ||
        endpoint === '/v1/messages' ||
        endpoint === '/v1/embeddings' ||
        (endpoint === '/v1/responses' && target.apiVersion === undefined)
      );
    case 'mock':
      return endpoint === '/v1/chat/completions' || endpoint === '/v1/embeddings' || endpoint === '/v1/messages';
    case 'anthropic':
      return endpoint === '/v1/messages';
    case 'bedrock':
    case 'vertex':
    case 'gemini':
      return false;
    default: {
      const never: never = target.provider;
      return never;
    }
  }
}

export interface BatchPlan {
  model: CompiledModel;
  target: CompiledTarget;
}

/** The model (which the key may use) and the target that runs a batch on it, or the 4xx that says why none. */
export function planBatch(snapshot: Snapshot, p: Principal, modelId: string, endpoint: BatchEndpoint): BatchPlan {
  const type = endpoint === '/v1/embeddings' ? 'embeddings' : 'chat';
  const [model] = resolveChain(snapshot, p, modelId, type);
  if (!model) throw new GatewayError('model_not_found', `The model ${JSON.stringify(modelId)} does not exist.`, { param: 'model' });
  const target = model.targets.find((t) => batches(t, endpoint));
  if (!target)
    throw new GatewayError(
      'invalid_request',
      `The model ${modelId} has no upstream that runs batches of ${endpoint} (OpenAI, Azure OpenAI, Anthropic and the mock provider do).`,
      { param: 'model' },
    );
  return { model, target };
}

/** A line's hold and usage bounds on the batch's model. */
export function lineOf(model: CompiledModel, customId: string, d: Demand): BatchLine {
  return { customId, holdNano: costBound(model, d), inputBound: inputBound(d), outputBound: outputBound(model, d) };
}

/** The batch's hold: every line's, bounded like any amount the store takes. */
export function batchHold(lines: readonly BatchLine[]): number {
  let sum = 0;
  for (const l of lines) sum = Math.min(sum + l.holdNano, MAX_AMOUNT);
  return sum;
}

/** The batch price of a line's usage (integer nano-USD, rounded down): the listed cost times the route's batch share. */
export function batchCost(model: BatchPrice, inputTokens: number, outputTokens: number): number {
  const listed = BigInt(inputTokens) * BigInt(model.inputNanoPerToken) + BigInt(outputTokens) * BigInt(model.outputNanoPerToken);
  const ppm = BigInt(model.batchPpm);
  const cost = (listed * ppm) / 1_000_000n;
  return cost > BigInt(MAX_AMOUNT) ? MAX_AMOUNT : Number(cost);
}

export interface BatchPrice {
  inputNanoPerToken: number;
  outputNanoPerToken: number;
  batchPpm: number;
}

export function batchPrice(m: CompiledModel): BatchPrice {
  return { inputNanoPerToken: m.inputNanoPerToken, outputNanoPerToken: m.outputNanoPerToken, batchPpm: m.batchPpm ?? DEFAULT_BATCH_PPM };
}

/** OpenAI's and Anthropic's batch price: half the listed one. */
export const DEFAULT_BATCH_PPM = 500_000;
