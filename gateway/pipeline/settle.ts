// Step 6: the actual cost charged, the rest of the hold released, one usage event, whatever the ending. A call that
// served nothing because its input was refused gives its RPM and TPM slot back. The usage charged is bounded by what
// the request could have used and estimated where the upstream reported none (bound-usage.ts): the charge never
// exceeds the hold, and a served call is never free unless its price is 0.
import { costNano } from '../contract/money.ts';
import { MAX_AMOUNT, type Hold } from '../state/store.ts';
import { chargedUsage } from './bound-usage.ts';
import { imageCostNano } from './image-price.ts';
import type { GatewayDeps } from './context.ts';
import { inputBound, outputBound, type Reservation } from './estimate.ts';
import type { CallEvents, Outcome } from './outcome.ts';
import type { UsageEvent } from '../usage/event.ts';

export type Settle = (o: Outcome) => Promise<UsageEvent>;

/** A cache hit's charge (pipeline/cache.ts hitCost): what it costs and what it saved against the original call. */
export interface HitCharge {
  costNano: number;
  savedNano: number;
}

/**
 * `hit`: a cache hit's charge. `guardNano`, when given, says what the call's remote guardrail checks cost
 * (gateway/guardrails/remote/): added to the charge of a served call, within the hold, and shown on the event as
 * guardrailCostNano.
 */
export function settler(deps: GatewayDeps, hold: Hold, events: CallEvents, r: Reservation, extra: { hit?: HitCharge; guardNano?: () => number } = {}): Settle {
  const { hit, guardNano } = extra;
  if (hit) return hitSettler(deps, hold, events, hit, guardNano);
  return async (o) => {
    const served = o.route?.model;
    const bounds = { input: inputBound(r.demand), output: served ? outputBound(served, r.demand) : 0 };
    // Estimated like a stream whose usage never came: input a quarter of the body's bytes, output what was served.
    const estimate = o.servedOutput === undefined ? null : { input: Math.ceil(r.demand.inputBytes / 4), output: o.servedOutput };
    const charged = chargedUsage(o.usage, bounds, estimate);
    const usage = charged.usage;
    let cost = !served
      ? 0
      : served.type === 'image'
        ? imageCostNano(served, usage, o.usage, r.demand.image ?? { n: 1, size: null, quality: null })
        : Math.min(costNano(usage.inputTokens, usage.outputTokens, served), MAX_AMOUNT);
    const guard = served && guardNano ? Math.min(guardNano(), Math.max(0, hold.holdNano - cost)) : 0;
    cost += guard;
    // Unreachable while the bounds hold (the hold is the dearest model's cost at those bounds); the last guard.
    if (cost > hold.holdNano) cost = hold.holdNano;
    const base = events.of({ ...o, usage }, cost, {
      estimated: charged.estimated,
      clamped: charged.clamped.length > 0,
      ...(guardNano ? { guardrailCostNano: guard } : {}),
    });
    // An image call counts the images it returned in their own unit, beside its tokens (or images) charged.
    const e: UsageEvent = served?.type === 'image' && o.usage.images !== undefined ? { ...base, unit: 'images', units: o.usage.images } : base;
    for (const reason of charged.clamped) deps.metrics.usageClamped?.(reason);
    if (charged.clamped.length > 0) {
      deps.log.warn(
        {
          eventId: e.eventId,
          upstream: e.upstream,
          servedModel: e.servedModel,
          reported: { input: o.usage.inputTokens, output: o.usage.outputTokens },
          bound: bounds,
        },
        'The upstream reported more tokens than the request could have used; the charge was cut to the bound',
      );
    }
    deps.metrics.observe(e, o.route?.target.provider ?? null);
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
    return e;
  };
}

/**
 * A cache hit settles through the same store step as every call: its hold released, its cost (the route's share of
 * the original's) charged, one usage event with the tokens the original call reported. It takes no TPM: its window
 * entry settles at 0 tokens (its RPM slot stays taken).
 */
function hitSettler(deps: GatewayDeps, hold: Hold, events: CallEvents, hit: HitCharge, guardNano?: () => number): Settle {
  return async (o) => {
    // Nothing served (the client left first): nothing charged, nothing saved, the RPM slot given back.
    const served = o.hit !== undefined;
    const hitCost = served ? Math.min(hit.costNano, hold.holdNano) : 0;
    const saved = served ? hit.savedNano + (hit.costNano - hitCost) : 0;
    const guard = served && guardNano ? Math.min(guardNano(), hold.holdNano - hitCost) : 0;
    const cost = hitCost + guard;
    const e = events.of(o, cost, { estimated: false, clamped: false, cacheSavedNano: saved, ...(guardNano ? { guardrailCostNano: guard } : {}) });
    deps.metrics.observe(e);
    try {
      await deps.store.settle(hold, { costNano: cost, tokens: 0, event: e, freeSlot: !served });
    } catch (err) {
      deps.log.error({ err, eventId: e.eventId }, 'Failed to settle a hold; it will expire');
    }
    return e;
  };
}

/**
 * The call ends without anything served and the slot it took is given back: the input was refused (a 4xx from a
 * translator or the upstream, no tokens), or the client left before any upstream was called.
 */
export function refusedInput(o: Outcome): boolean {
  if (o.usage.inputTokens !== 0 || o.usage.outputTokens !== 0) return false;
  // An answer a guardrail blocked was produced (guardrails/answer-block.ts): its slot is kept, as a client's gone mid-stream.
  if (o.errorCode === 'content_blocked' && o.contacted) return false;
  if (o.status === 499) return !o.contacted;
  return o.status >= 400 && o.status < 500;
}
