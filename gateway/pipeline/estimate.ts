// The worst case a call may cost, reserved at admission: input bounded by the request body's size in bytes (no
// tokenizer yields more tokens than bytes, and the prompt is part of the body), output by max_tokens or the model's
// output cap, at the dearest model of the chain.
import type { CompiledModel } from '../contract/snapshot.ts';
import { MAX_AMOUNT } from '../state/store.ts';

export interface Reservation {
  /** The request body's size: the bound on its input tokens. */
  inputBytes: number;
  outputTokens: number;
  holdNano: number;
}

export function reserve(chain: readonly CompiledModel[], inputBytes: number, maxTokens: number | undefined): Reservation {
  let outputTokens = 0;
  let holdNano = 0;
  for (const m of chain) {
    const out = m.type === 'embeddings' ? 0 : (maxTokens ?? m.maxOutputTokens);
    outputTokens = Math.max(outputTokens, out);
    holdNano = Math.max(holdNano, inputBytes * m.inputNanoPerToken + out * m.outputNanoPerToken);
  }
  // A max_tokens no account could pay for (2^53, say) is bounded, not an error: admission refuses it by TPM or balance.
  return { inputBytes, outputTokens: Math.min(outputTokens, MAX_AMOUNT - inputBytes), holdNano: Math.min(holdNano, MAX_AMOUNT) };
}
