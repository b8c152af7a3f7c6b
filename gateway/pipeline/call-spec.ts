// What a route tells the pipeline about one call: all of it read from the request, none of it HTTP.
import type { CompiledModel } from '../contract/snapshot.ts';
import type { Dialect } from '../errors/catalog.ts';
import type { Protocol } from '../providers/types.ts';
import type { Translation } from '../translate/types.ts';
import type { Endpoint } from '../usage/event.ts';
import type { ImageDemand } from './image-price.ts';
import type { Principal } from './resolve.ts';
import type { CallSink } from './sink.ts';

/**
 * A feature around one call, kept out of the steps (stored Responses: stored-responses/step.ts). `begin` runs once
 * the account is known, before the hold is computed, and may replace what the request sends upstream; `sink` wraps
 * the answer's sink; `end` runs after the answer (the client has it already).
 */
export interface CallAround {
  begin(account: string): Promise<Partial<Pick<CallSpec, 'translationFor' | 'inputBytes' | 'extraInputTokens'>>>;
  sink(inner: CallSink): CallSink;
  end(): Promise<void>;
}

export interface CallSpec {
  dialect: Dialect;
  endpoint: Endpoint;
  modelType: CompiledModel['type'];
  modelId: string;
  stream: boolean;
  taskType: string | null;
  maxTokens: number | undefined;
  /** The request body's size in bytes: the bound on its input tokens (estimate.ts). */
  inputBytes: number;
  /** Tokens of image and file parts beyond their bytes, at the upstream's worst case (non-text.ts); default 0. */
  extraInputTokens?: number;
  /** Choices asked for (Chat Completions `n`): the output bound is the cap times this; default 1. */
  choices?: number;
  /** Rerank: the most search units the call can be billed (rerank-bound.ts). */
  searchUnits?: number;
  /** Image calls: the images, size and quality asked for (priced and checked by image-price.ts). */
  image?: ImageDemand;
  translationFor: (protocol: Protocol) => Translation;
  /** The client's parsed body, set only while tracing (a ModelRoute may capture its prompt: tracing/content.ts). */
  body?: unknown;
  /**
   * The validated request body, for the response cache's key (pipeline/cache.ts); absent: the call is never cached
   * (the Responses API, count_tokens).
   */
  cacheBody?: Readonly<Record<string, unknown>>;
  /** Request headers that shape the upstream request (anthropic-version, anthropic-beta): in the cache key too. */
  cacheVary?: Readonly<Record<string, unknown>>;
  /**
   * The parsed body the translation reads, for the guardrails (gateway/guardrails/): checked and masked in place
   * before the first translation; absent on endpoints without text to check.
   */
  guardBody?: Record<string, unknown>;
  /** Extra gate after the principal is known (the Anthropic endpoint's plan gate). */
  gate?: (p: Principal) => void;
  around?: CallAround;
}
