// The worst case a call may cost, reserved at admission: input bounded by its UTF-8 size (no tokenizer
// yields more tokens than bytes), output by max_tokens or the model's output cap, at the dearest model of the chain.
import type { CompiledModel } from '../contract/snapshot.ts';

export interface Reservation {
  inputTokens: number;
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
  return { inputTokens: inputBytes, outputTokens, holdNano };
}

export function utf8Length(v: unknown): number {
  return Buffer.byteLength(typeof v === 'string' ? v : JSON.stringify(v ?? ''), 'utf8');
}
