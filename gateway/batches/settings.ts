// The settings of files and batches (SVC_FILES_*, SVC_BATCH_*; gateway/options.ts reads them from the environment).

export interface BatchSettings {
  /** Largest upload to /v1/files, in bytes (SVC_FILES_MAX_BYTES; OpenAI's 200 MB for batch files). */
  maxUploadBytes: number;
  /** How long an uploaded or output file is kept (SVC_FILES_RETENTION_DAYS, default 30). */
  fileRetentionSec: number;
  /** The completion window a batch is given (24 h, the only one OpenAI and Anthropic offer). */
  windowMs: number;
  /** How long a batch's hold outlives its window (the upstream's results can arrive late): 1 h. */
  holdGraceMs: number;
  /** How often the job looks at open batches (SVC_BATCH_POLL_SECONDS, default 5). */
  pollMs: number;
}

export const DEFAULT_BATCH_SETTINGS: BatchSettings = {
  maxUploadBytes: 200 * 1024 * 1024,
  fileRetentionSec: 30 * 86_400,
  windowMs: 24 * 3_600_000,
  holdGraceMs: 3_600_000,
  pollMs: 5_000,
};
