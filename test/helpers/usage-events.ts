// Usage events as the gateway makes them, for tests of the exporter and the Postgres schema.
import { randomUUID } from 'node:crypto';
import type { UsageEvent } from '../../gateway/usage/event.ts';

export function sampleEvent(over: Partial<UsageEvent> = {}): UsageEvent {
  return {
    eventId: randomUUID(),
    createdAt: new Date().toISOString(),
    account: 'acme',
    apiKey: 'ci-key',
    taskType: 'summarize',
    endpoint: 'chat.completions',
    requestedModel: 'gpt-x',
    servedModel: 'gpt-x',
    upstream: 'primary',
    fallback: false,
    fallbackReason: null,
    status: 200,
    errorCode: null,
    stream: true,
    inputTokens: 11,
    outputTokens: 7,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costNano: 25_000,
    feeNano: 961,
    latencyMs: 120,
    ttftMs: 40,
    ...over,
  };
}

/** The entry fields settle.lua and record() write (redis-store.ts, "Usage stream format"). */
export function streamFields(e: UsageEvent): string[] {
  return ['v', '1', 'event', JSON.stringify(e)];
}

/** The entry fields lease.lua writes for a flush of several settles (format 2: the events as one JSON array). */
export function streamBatchFields(events: readonly UsageEvent[]): string[] {
  return ['v', '2', 'events', JSON.stringify(events)];
}
