// Step 6: the actual cost charged, the rest of the hold released, one usage event, whatever the ending. A call that
// served nothing because its input was refused gives its RPM and TPM slot back.
import { costNano } from '../contract/money.ts';
import { MAX_AMOUNT, type Hold } from '../state/store.ts';
import type { Usage } from '../translate/types.ts';
import type { GatewayDeps } from './context.ts';
import type { CallEvents, Outcome } from './outcome.ts';

/** More tokens than any call can carry; an upstream that reports more is capped here. */
const MAX_TOKENS = 1e12;

export type Settle = (o: Outcome) => Promise<void>;

export function settler(deps: GatewayDeps, hold: Hold, events: CallEvents): Settle {
  return async (o) => {
    const served = o.route?.model;
    const usage = boundedUsage(o.usage);
    const cost = served ? Math.min(costNano(usage.inputTokens, usage.outputTokens, served), MAX_AMOUNT) : 0;
    const e = events.of({ ...o, usage }, cost);
    deps.metrics.observe(e);
    try {
      await deps.store.settle(hold, {
        costNano: cost,
        tokens: Math.min(usage.inputTokens + usage.outputTokens, MAX_AMOUNT),
        event: e,
        freeSlot: refusedInput(o),
      });
    } catch (err) {
      // The hold expires on its own in the store; the usage event is logged so nothing is silently lost.
      deps.log.error({ err, eventId: e.eventId }, 'Failed to settle a hold; it will expire');
    }
  };
}

/**
 * The call ends without anything served and the slot it took is given back: the input was refused (a 4xx from a
 * translator or the upstream, no tokens), or the client left before any upstream was called.
 */
export function refusedInput(o: Outcome): boolean {
  if (o.usage.inputTokens !== 0 || o.usage.outputTokens !== 0) return false;
  if (o.status === 499) return !o.contacted;
  return o.status >= 400 && o.status < 500;
}

/** Token counts as a store takes them: whole, non-negative, bounded (an upstream's usage is not trusted blindly). */
export function boundedUsage(u: Usage): Usage {
  const n = (x: number): number => (Number.isFinite(x) && x > 0 ? Math.min(Math.floor(x), MAX_TOKENS) : 0);
  return { inputTokens: n(u.inputTokens), outputTokens: n(u.outputTokens), cacheReadTokens: n(u.cacheReadTokens), cacheWriteTokens: n(u.cacheWriteTokens) };
}
