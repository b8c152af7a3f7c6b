// The usage a call is charged for, from what its upstream reported: estimated where the report is missing or not
// a whole number (a served call is never free), and never beyond what the request could have used (an upstream's
// report is not trusted without bound), so the charge never exceeds the hold.
import type { Usage } from '../translate/types.ts';

/** What the request could have used: the hold's token bounds for the model that served it. */
export interface TokenBounds {
  input: number;
  output: number;
}

export type ClampReason = 'input' | 'output';

export interface ChargedUsage {
  usage: Usage;
  /** A missing or malformed count was replaced by an estimate. */
  estimated: boolean;
  /** The counts that were above their bound and were cut to it. */
  clamped: ClampReason[];
}

/** Whole, non-negative and finite, or 0 (the parsers flag what they could not read; this is the last guard). */
function whole(x: number): number {
  return Number.isFinite(x) && x > 0 ? Math.floor(x) : 0;
}

/**
 * `estimate` is what the call served, when it served anything (input from the body's size, output from the answer's
 * size or the stream's events): it replaces a count the upstream did not report, and both when it reported none
 * (0 and 0 for a served call). null: nothing was served, the report is taken as it is (bounded).
 */
export function chargedUsage(reported: Usage, bounds: TokenBounds, estimate: TokenBounds | null): ChargedUsage {
  let input = whole(reported.inputTokens);
  let output = whole(reported.outputTokens);
  let estimated = false;
  if (estimate) {
    const none = input === 0 && output === 0;
    if (reported.inputMissing === true || none) {
      input = Math.min(whole(estimate.input), bounds.input);
      estimated ||= input > 0;
    }
    if (reported.outputMissing === true || none) {
      output = Math.min(whole(estimate.output), bounds.output);
      estimated ||= output > 0;
    }
  }
  const clamped: ClampReason[] = [];
  if (input > bounds.input) {
    input = bounds.input;
    clamped.push('input');
  }
  if (output > bounds.output) {
    output = bounds.output;
    clamped.push('output');
  }
  const cacheRead = Math.min(whole(reported.cacheReadTokens), input);
  const cacheWrite = Math.min(whole(reported.cacheWriteTokens), input - cacheRead);
  return { usage: { inputTokens: input, outputTokens: output, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite }, estimated, clamped };
}
