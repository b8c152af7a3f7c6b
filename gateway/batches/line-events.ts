// Each line of a batch is one usage event, whose id is made from the batch id and the line's custom_id (the same
// line read again after a restart is the same event, charged once), created at the batch's creation (its admission).
import { createHash } from 'node:crypto';
import { feeShareNano } from '../contract/money.ts';
import type { Endpoint, UsageEvent } from '../usage/event.ts';
import type { BatchEndpoint, BatchRecord } from './types.ts';

const ENDPOINTS: Record<BatchEndpoint, Endpoint> = {
  '/v1/chat/completions': 'chat.completions',
  '/v1/embeddings': 'embeddings',
  '/v1/responses': 'responses',
  '/v1/messages': 'messages',
};

/** A UUID (the form usage_events.event_id takes) named by the batch and the line: version 8, RFC 9562's custom one. */
export function lineEventId(batchId: string, customId: string): string {
  const h = createHash('sha256').update(batchId).update('\n').update(customId).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x80;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export interface LineOutcome {
  customId: string;
  status: number;
  errorCode: string | null;
  inputTokens: number;
  outputTokens: number;
  costNano: number;
}

export function lineEvent(b: BatchRecord, o: LineOutcome, now: number): UsageEvent {
  const ran = o.status >= 200 && o.status < 300;
  return {
    eventId: lineEventId(b.id, o.customId),
    createdAt: new Date(b.createdAt).toISOString(),
    account: b.account,
    apiKey: b.apiKey,
    taskType: null,
    endpoint: ENDPOINTS[b.endpoint],
    requestedModel: b.model,
    servedModel: ran ? b.model : null,
    upstream: b.target,
    fallback: false,
    fallbackReason: null,
    status: o.status,
    errorCode: o.errorCode,
    stream: false,
    inputTokens: o.inputTokens,
    outputTokens: o.outputTokens,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costNano: o.costNano,
    feeNano: feeShareNano(o.costNano),
    latencyMs: Math.max(0, now - b.createdAt),
    ttftMs: null,
    usageEstimated: false,
    usageClamped: false,
    batch: true,
  };
}
