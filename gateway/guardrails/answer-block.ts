// An answer a guardrail blocked after the upstream produced it (whole or mid-stream): the call's upstream is cancelled
// at once, so no more is generated, and the call's outcome names the block (400 content_blocked) instead of the
// disconnect or the clean end it would otherwise look like. The money follows the rule of a client that left
// mid-stream: what the upstream produced before the block is charged (pipeline/settle.ts), nothing after it.
import { ERRORS } from '../errors/catalog.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { Settle } from '../pipeline/settle.ts';
import type { GuardFact } from './apply.ts';

export class AnswerBlock {
  private readonly stop = new AbortController();
  private fact: GuardFact | null = null;

  /** The response-stage check that blocked, if one did. */
  get blocked(): GuardFact | null {
    return this.fact;
  }

  note(f: GuardFact): void {
    if (this.fact) return;
    this.fact = f;
    this.stop.abort(new Error(`The answer was blocked by guardrail ${f.guardrail}.`));
  }

  /** The call's client signal, also aborted by a block: the pipeline then cancels the upstream as for a client gone. */
  signal(client: AbortSignal): AbortSignal {
    return AbortSignal.any([client, this.stop.signal]);
  }

  /** The settle of the call, its outcome renamed once an answer was blocked. */
  settle(inner: Settle): Settle {
    return (o) => inner(this.fact ? blockedOutcome(o) : o);
  }
}

/** A served call whose answer was blocked: content_blocked, its usage and route kept (they say what was produced). */
export function blockedOutcome(o: Outcome): Outcome {
  // An upstream failure or a shutdown that came first keeps its own name.
  if (o.status !== 200 && o.errorCode !== 'client_closed') return o;
  return { ...o, status: ERRORS.content_blocked.status, errorCode: 'content_blocked' };
}
