// What the job needs from an upstream's batch API: submit the lines, poll, cancel. One implementation per API
// (OpenAI and Azure OpenAI: openai-upstream.ts; the built-in mock: mock-upstream.ts), chosen by the target's kind.
import type { CompiledTarget } from '../contract/snapshot.ts';
import type { BatchRecord, LineResult } from './types.ts';

export type PollResult =
  | { state: 'running'; status: 'validating' | 'in_progress' | 'finalizing' | 'cancelling' }
  | { state: 'ended'; status: 'completed' | 'failed' | 'expired' | 'cancelled'; results: LineResult[]; errors: Array<{ code: string; message: string }> };

export interface BatchUpstream {
  /** Sends the lines (the client's JSONL, each body's model already the target's upstream model); the upstream's id. */
  submit(b: BatchRecord, target: CompiledTarget, jsonl: string): Promise<string>;
  /** `input`: the batch's input lines again (the mock runs them when it answers). */
  poll(b: BatchRecord, target: CompiledTarget, input: () => Promise<string | null>): Promise<PollResult>;
  cancel(b: BatchRecord, target: CompiledTarget): Promise<void>;
}

/** The tokens an answer body reports: Chat Completions and embeddings `prompt_tokens`/`completion_tokens`, Responses
 * `input_tokens`/`output_tokens`, Anthropic Messages likewise (cache reads and writes counted as input). */
export function reportedTokens(body: unknown): { input: number; output: number } {
  const u = (body as { usage?: Record<string, unknown> } | null)?.usage;
  if (!u || typeof u !== 'object') return { input: 0, output: 0 };
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
  const input = n(u.prompt_tokens) + n(u.input_tokens) + n(u.cache_read_input_tokens) + n(u.cache_creation_input_tokens);
  const output = n(u.completion_tokens) + n(u.output_tokens);
  return { input, output };
}

/** The client's lines with each body's model replaced by the target's upstream model. */
export function upstreamLines(jsonl: string, upstreamModel: string): string {
  return jsonl
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const o = JSON.parse(l) as { body: Record<string, unknown> };
      return JSON.stringify({ ...o, body: { ...o.body, model: upstreamModel } });
    })
    .join('\n')
    .concat('\n');
}
