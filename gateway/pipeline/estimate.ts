// The worst case a call may cost, reserved at admission, and the bound its settled usage is held to.
// Input: the request body's size in bytes (no tokenizer yields more tokens than bytes, and the prompt is part of the
// body) plus, for each part whose tokens its bytes do not bound (an image or a file given by URL or id), the
// upstream's worst case for it (non-text.ts). Output: the cap sent upstream (max_tokens, or the model's
// maxOutputTokens when the call gives none) times the choices asked for (`n`). Priced at the dearest model of the
// chain; the TPM reservation is the same token bound.
import type { CompiledModel } from '../contract/snapshot.ts';
import { MAX_AMOUNT } from '../state/store.ts';
import { imageInputNanoMax, imageOutputNano, type ImageDemand } from './image-price.ts';

/** What the request alone says about its size. */
export interface Demand {
  /** The request body's size in bytes. */
  inputBytes: number;
  /** Tokens of non-text parts beyond their bytes (images, files), at the upstream's worst case. */
  extraInputTokens: number;
  /** The client's output cap; undefined: each model's maxOutputTokens (and that is what goes upstream). */
  maxTokens: number | undefined;
  /** Choices asked for (Chat Completions `n`, legacy completions' larger of `n` and `best_of`); 1 elsewhere. */
  choices: number;
  /** Rerank: the most search units the call can be billed (its output count: rerank-bound.ts); 0 elsewhere. */
  searchUnits?: number;
  /** Image calls: the images, size and quality asked for (image-price.ts); absent elsewhere. */
  image?: ImageDemand;
}

export interface Reservation {
  /** Bound on the call's input tokens. */
  inputTokens: number;
  /** Bound on its output tokens, the largest of the chain's models. */
  outputTokens: number;
  holdNano: number;
  demand: Demand;
}

/** A product bounded by MAX_AMOUNT (the operands are non-negative; 2^53 cap times n must not lose exactness). */
function mulBounded(a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : a > MAX_AMOUNT / b ? MAX_AMOUNT : a * b;
}

export function inputBound(d: Demand): number {
  return Math.min(d.inputBytes + d.extraInputTokens, MAX_AMOUNT);
}

/**
 * The output tokens model `m` may produce for this call: its cap times the choices (0 for embeddings and moderation);
 * a rerank's output count is its search units.
 */
export function outputBound(m: CompiledModel, d: Demand): number {
  if (m.type === 'embeddings' || m.type === 'moderation') return 0;
  if (m.type === 'rerank') return Math.min(d.searchUnits ?? 0, MAX_AMOUNT);
  // An image model's output count: images when priced per image, else image tokens (maxOutputTokens per image).
  if (m.type === 'image') {
    const n = Math.max(1, d.image?.n ?? 1);
    return m.imagePrices ? n : mulBounded(d.maxTokens ?? m.maxOutputTokens, n);
  }
  return mulBounded(d.maxTokens ?? m.maxOutputTokens, Math.max(1, d.choices));
}

/** The worst-case cost of the call on model `m`. */
export function costBound(m: CompiledModel, d: Demand): number {
  if (m.type === 'image') {
    const image = d.image ?? { n: 1, size: null, quality: null };
    return Math.min(mulBounded(inputBound(d), imageInputNanoMax(m)) + mulBounded(outputBound(m, d), imageOutputNano(m, image)), MAX_AMOUNT);
  }
  return Math.min(mulBounded(inputBound(d), m.inputNanoPerToken) + mulBounded(outputBound(m, d), m.outputNanoPerToken), MAX_AMOUNT);
}

export function reserve(chain: readonly CompiledModel[], d: Demand): Reservation {
  let outputTokens = 0;
  let holdNano = 0;
  for (const m of chain) {
    outputTokens = Math.max(outputTokens, outputBound(m, d));
    holdNano = Math.max(holdNano, costBound(m, d));
  }
  const inputTokens = inputBound(d);
  // An output cap no account could pay for (2^53, say) is bounded, not an error: admission refuses it (admit.ts).
  return { inputTokens, outputTokens: Math.min(outputTokens, MAX_AMOUNT - inputTokens), holdNano, demand: d };
}

/** Chat Completions `n` as the upstream would read it: a number (or numeric string) above 1, else 1. */
export function choicesOf(n: unknown): number {
  const v = typeof n === 'number' || typeof n === 'string' ? Number(n) : 1;
  return Number.isFinite(v) && v > 1 ? Math.min(Math.ceil(v), MAX_AMOUNT) : 1;
}
