// Stored Responses (POST /v1/responses with store, GET/DELETE /v1/responses/{id}, input_items, previous_response_id):
// what one stored response is and what a place that keeps them does. Records belong to an account: every read names
// the account, so another account's id is not found (404), never forbidden (which would say that it exists).
import type { Json } from '../translate/json-read.ts';

export interface StoredResponse {
  id: string;
  account: string;
  /** The response this one continued (previous_response_id), or null. */
  previousId: string | null;
  /** ms since the epoch (the pipeline's clock). */
  createdAt: number;
  expiresAt: number;
  /** The input items this call added (each with an id), as listed by input_items after those of its chain. */
  input: Json[];
  /** The response object as the client got it (output items, usage, model, status, instructions, metadata). */
  response: Json;
}

/** Bytes a record counts against its account's bound: its input and response as JSON. */
export function recordBytes(r: Pick<StoredResponse, 'input' | 'response'>): number {
  return Buffer.byteLength(JSON.stringify(r.input)) + Buffer.byteLength(JSON.stringify(r.response));
}

export interface ResponseStore {
  /** Several gateway processes share it (Postgres): a record another process just wrote may take a moment to show. */
  readonly shared: boolean;
  /** Keeps a record (its account's expired records are dropped first). */
  put(r: StoredResponse, now: number): Promise<void>;
  /** The record if it is the account's and not expired, else null. */
  get(account: string, id: string, now: number): Promise<StoredResponse | null>;
  /** True if the account had it (and now has not). */
  delete(account: string, id: string, now: number): Promise<boolean>;
  /**
   * Optional, one round trip: the records of the chain that ends at `id`, newest first, as far as they are found and
   * until their bytes pass `maxBytes` (service.ts walks the rest, if any, one record at a time).
   */
  chain?(account: string, id: string, now: number, maxBytes: number): Promise<StoredResponse[]>;
  /** Bytes the account's live records hold. */
  usedBytes(account: string, now: number): Promise<number>;
  close(): Promise<void>;
}

export interface StoredResponsesSettings {
  /** SVC_RESPONSES_RETENTION_DAYS in ms (default 30 days, as OpenAI keeps them). */
  retentionMs: number;
  /** SVC_RESPONSES_ACCOUNT_MAX_BYTES: what one account's stored responses may hold, and the bound of a rebuilt input. */
  accountBytes: number;
}

export const DAY_MS = 86_400_000;
export const DEFAULT_RETENTION_DAYS = 30;
export const DEFAULT_ACCOUNT_BYTES = 64 * 1024 * 1024;
export const DEFAULT_STORED_RESPONSES: StoredResponsesSettings = { retentionMs: DEFAULT_RETENTION_DAYS * DAY_MS, accountBytes: DEFAULT_ACCOUNT_BYTES };
