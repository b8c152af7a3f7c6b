// One usage event per call (success, error, fallback), created with a server-side id at admission.
import { randomUUID } from 'node:crypto';
import type { FallbackReason } from '../routing/classify.ts';

/** `mcp`: a tools/call through /mcp (requestedModel `<server>/<tool>`, upstream the McpServer). */
export type Endpoint =
  | 'chat.completions'
  | 'embeddings'
  | 'messages'
  | 'count_tokens'
  | 'responses'
  | 'mcp'
  | 'completions'
  | 'rerank'
  | 'moderations'
  | 'images.generations'
  | 'images.edits'
  | 'audio.transcriptions'
  | 'audio.translations'
  | 'audio.speech';

export interface UsageEvent {
  eventId: string;
  createdAt: string;
  account: string;
  apiKey: string;
  taskType: string | null;
  endpoint: Endpoint;
  requestedModel: string;
  servedModel: string | null;
  upstream: string | null;
  fallback: boolean;
  fallbackReason: FallbackReason | null;
  status: number;
  errorCode: string | null;
  stream: boolean;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costNano: number;
  feeNano: number;
  latencyMs: number;
  ttftMs: number | null;
  /** Hosted tools left out of the upstream request (gateway/translate/hosted-tools.ts); absent when none. */
  droppedTools?: string[];
  /** The upstream's usage was missing or malformed and an estimate was charged (pipeline/bound-usage.ts). */
  usageEstimated?: boolean;
  /** The upstream reported more than the request could have used; the charge was cut to the call's bound. */
  usageClamped?: boolean;
  /**
   * Audio and image calls: the unit counted beside tokens (seconds of audio a transcription was charged for,
   * characters of a speech's input, images an image call returned, whether its route is priced per image or by
   * tokens) and how many; absent on other calls.
   */
  unit?: BilledUnit;
  units?: number;
  /** A line of a batch (/v1/batches, Anthropic's Message Batches), charged at the batch price; absent on other calls. */
  batch?: boolean;
  /** The response cache (pipeline/cache.ts): absent on routes without spec.cache. */
  cache?: CacheState;
  /** On a hit: what the original call cost minus what this one was charged (nano-USD). */
  cacheSavedNano?: number;
  /** What the guardrails found and did (gateway/guardrails/): guardrail, check, action, stage, kind, count; never the text. */
  guardrails?: GuardrailFact[];
  /**
   * The part of costNano that paid the remote guardrail checks (the clouds' content services, webhooks) at their
   * Guardrail's price; absent on calls that ran none.
   */
  guardrailCostNano?: number;
}

export interface GuardrailFact {
  guardrail: string;
  check: string;
  action: 'block' | 'mask' | 'log';
  stage: 'request' | 'response';
  kind: string;
  count: number;
}

export type BilledUnit = 'seconds' | 'characters' | 'images';

/** hit: answered from the cache; miss: looked up, not found, called upstream; bypass: not cacheable this time. */
export type CacheState = 'hit' | 'miss' | 'bypass';
export const CACHE_STATES: readonly CacheState[] = ['hit', 'miss', 'bypass'];

export function newEventId(): string {
  return randomUUID();
}

export interface UsageSink {
  emit(event: UsageEvent): void;
}

/** Keeps the latest events in memory (standalone without Postgres): at least the last `max`, never more than twice that. */
export class MemoryUsageSink implements UsageSink {
  readonly events: UsageEvent[] = [];
  private readonly max: number;

  constructor(max = 10_000) {
    this.max = max;
  }

  emit(event: UsageEvent): void {
    this.events.push(event);
    // Trimmed in one go once it doubles: amortized O(1) per event (trimming one at a time moved the whole array).
    if (this.events.length >= 2 * this.max) this.events.splice(0, this.events.length - this.max);
  }
}
