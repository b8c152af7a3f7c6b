// How a call ended, and the one usage event that records it.
import { feeShareNano } from '../contract/money.ts';
import type { FallbackReason } from '../routing/classify.ts';
import type { Usage } from '../translate/types.ts';
import type { GuardFact } from '../guardrails/apply.ts';
import type { CacheState } from '../usage/event.ts';
import { newEventId, type UsageEvent } from '../usage/event.ts';
import { CACHE_UPSTREAM } from './cache.ts';
import type { CallSpec } from './call-spec.ts';
import type { Route } from './dispatch.ts';
import type { Principal } from './resolve.ts';

export interface Outcome {
  status: number;
  errorCode: string | null;
  route: Route | null;
  usage: Usage;
  ttftMs: number | null;
  /** Whether any upstream was called (dispatch started). */
  contacted: boolean;
  /** Output tokens estimated from what was served (the answer's size, the stream's events); absent: nothing served. */
  servedOutput?: number;
  /** The response cache's part in the call (pipeline/cache.ts); absent on routes without a cache. */
  cache?: CacheState;
  /** Answered from the cache: the model the cached answer came from (its upstream is `cache`). */
  hit?: { servedModel: string };
}

/** How the charged usage departs from the upstream's report (bound-usage.ts). */
export interface UsageFlags {
  estimated: boolean;
  clamped: boolean;
  /** A cache hit: the original call's cost minus this one's. */
  cacheSavedNano?: number;
  /** The part of the cost that paid the call's remote guardrail checks (set only on calls that have some). */
  guardrailCostNano?: number;
}

/** The usage event of one call; its id is made once, before admission, and names the hold too. */
export interface CallEvents {
  readonly eventId: string;
  /** When the call started (ms): its admission time and its event's createdAt. */
  readonly started: number;
  of(o: Outcome, costNano: number, flags?: UsageFlags): UsageEvent;
}

/** What an event takes from the call: a model call's CallSpec, or an MCP tool call's own (gateway/mcp/charge.ts). */
export type EventSpec = Pick<CallSpec, 'taskType' | 'endpoint' | 'modelId' | 'stream'>;

export function callEvents(spec: EventSpec, p: Principal, started: number, now: () => number, guardFacts?: readonly GuardFact[]): CallEvents {
  const eventId = newEventId();
  const createdAt = new Date(started).toISOString();
  return {
    eventId,
    started,
    // Optional fields added after the fixed ones, in the same order as ever (the event's JSON keeps its key order),
    // without spreading an empty object for each one that is absent: this runs on every call.
    of: (o, cost, flags) => {
      const e: UsageEvent = {
        eventId,
        createdAt,
        account: p.account.name,
        apiKey: p.key.name,
        taskType: spec.taskType,
        endpoint: spec.endpoint,
        requestedModel: spec.modelId,
        servedModel: o.route?.model.id ?? o.hit?.servedModel ?? null,
        upstream: o.route?.target.name ?? (o.hit ? CACHE_UPSTREAM : null),
        fallback: o.route?.fallback ?? false,
        fallbackReason: (o.route?.fallbackReason ?? null) as FallbackReason | null,
        status: o.status,
        errorCode: o.errorCode,
        stream: spec.stream,
        inputTokens: o.usage.inputTokens,
        outputTokens: o.usage.outputTokens,
        cacheReadTokens: o.usage.cacheReadTokens,
        cacheWriteTokens: o.usage.cacheWriteTokens,
        costNano: cost,
        feeNano: feeShareNano(cost),
        latencyMs: now() - started,
        ttftMs: o.ttftMs,
      };
      if (o.route?.droppedTools && o.route.droppedTools.length > 0) e.droppedTools = [...o.route.droppedTools];
      e.usageEstimated = flags?.estimated ?? false;
      e.usageClamped = flags?.clamped ?? false;
      if (o.cache) e.cache = o.cache;
      if (flags?.cacheSavedNano !== undefined) e.cacheSavedNano = flags.cacheSavedNano;
      if (flags?.guardrailCostNano !== undefined) e.guardrailCostNano = flags.guardrailCostNano;
      if (guardFacts && guardFacts.length > 0) e.guardrails = guardFacts.map((f) => ({ ...f }));
      return e;
    },
  };
}
