// The output bound a pass-through sends upstream is the one the hold assumed (pipeline/estimate.ts). A body may name
// that bound in several fields (Chat's max_completion_tokens and its legacy max_tokens, or a field of another
// dialect an OpenAI- or Anthropic-compatible vendor reads): vendors differ in which one they honour, so every one
// the client sent goes upstream with the held value, and none can make the upstream generate (and bill) beyond it.
import type { Json } from './json-read.ts';

/** Every field by which some dialect or compatible vendor bounds a call's output tokens. */
export const OUTPUT_BOUND_FIELDS = ['max_completion_tokens', 'max_tokens', 'max_output_tokens'] as const;

/** Sets each output bound `body` carries (null included: "no bound" to some vendors) to `held`. */
export function sendHeldBound(body: Json, held: number): void {
  for (const field of OUTPUT_BOUND_FIELDS) if (field in body) body[field] = held;
}
