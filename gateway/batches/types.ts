// Files and batches as the gateway keeps them (gateway/batches/): per account, never readable by another account.
import type { Hold } from '../state/store.ts';

/** The endpoints a batch line may call (as OpenAI's Batch API), and Anthropic's Message Batches. */
export const BATCH_URLS = ['/v1/chat/completions', '/v1/embeddings', '/v1/responses'] as const;
export type BatchUrl = (typeof BATCH_URLS)[number];
export type BatchEndpoint = BatchUrl | '/v1/messages';

export interface FileRecord {
  id: string;
  account: string;
  /** `batch` (uploaded), `batch_output` and `batch_error` (written by the gateway); a Message Batch's requests and
   * results (`message_batch`, `message_batch_results`: read through /anthropic/v1/messages/batches only). */
  purpose: 'batch' | 'batch_output' | 'batch_error' | 'message_batch' | 'message_batch_results';
  filename: string;
  bytes: number;
  /** Seconds since the epoch, as OpenAI writes them. */
  createdAt: number;
  /** When the file is deleted (the retention setting), in seconds. */
  expiresAt: number;
  /** The model of a batch input file's lines (one model per file). */
  model?: string;
}

/** One request of a batch: the most it may cost (its hold, at the listed price); its body stays in the input file. */
export interface BatchLine {
  customId: string;
  holdNano: number;
  /** Bounds of its usage (the hold's tokens), so an upstream's report never charges beyond the hold. */
  inputBound: number;
  outputBound: number;
}

/** What one line came back as. */
export interface LineResult {
  customId: string;
  /** The upstream's HTTP status for the line; 0: no answer (cancelled or expired before it ran). */
  status: number;
  /** The answer body (status 2xx) or the error body, in the client's dialect. */
  body: unknown;
  /** Tokens the upstream reported for the line (0 and 0 when it ran not). */
  inputTokens: number;
  outputTokens: number;
  /** An error that is no answer (expired, cancelled): code and message. */
  error?: { code: string; message: string };
}

export type BatchStatus = 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';

export const TERMINAL: ReadonlySet<BatchStatus> = new Set(['completed', 'failed', 'expired', 'cancelled']);

export interface BatchRecord {
  id: string;
  account: string;
  /** The key that created it (its name: usage events and the budget it counts against). */
  apiKey: string;
  dialect: 'openai' | 'anthropic';
  endpoint: BatchEndpoint;
  inputFileId: string | null;
  completionWindow: string;
  metadata: Record<string, string> | null;
  model: string;
  /** The model's prices when the batch was made (nano-USD per token, batch share in millionths): what its lines pay. */
  price: { inputNanoPerToken: number; outputNanoPerToken: number; batchPpm: number };
  /** The route target that runs it (the route's first target that batches). */
  target: string;
  status: BatchStatus;
  /** The upstream's batch id once submitted. */
  upstreamId: string | null;
  /** ms timestamps. */
  createdAt: number;
  inProgressAt: number | null;
  endedAt: number | null;
  cancellingAt: number | null;
  expiresAt: number;
  hold: Hold;
  lines: BatchLine[];
  /** Lines counted when results arrived. */
  counts: { total: number; completed: number; failed: number };
  outputFileId: string | null;
  errorFileId: string | null;
  /** Every line charged and the rest of the hold released: nothing more to do. */
  settled: boolean;
  /** The upstream was asked to cancel it. */
  cancelSent: boolean;
  /** Submissions or polls that failed in a row (the job gives up on a submission after a few). */
  failures: number;
  /** The upstream said why the whole batch failed. */
  errors: Array<{ code: string; message: string; line?: number }>;
  /** A Message Batch once ended: its lines by Anthropic's result types. */
  resultCounts?: MessageResultCounts;
  /** A Message Batch deleted by its owner (ms): not found any more, its files gone. */
  deletedAt?: number;
}

export interface MessageResultCounts {
  succeeded: number;
  errored: number;
  canceled: number;
  expired: number;
}

/** The purposes only the Message Batches endpoints read (/v1/files neither lists nor serves them). */
export const MESSAGE_BATCH_PURPOSES: ReadonlySet<FileRecord['purpose']> = new Set(['message_batch', 'message_batch_results']);
