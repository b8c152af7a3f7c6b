// The output and error files of a finished batch in OpenAI's batch output format: one line per request,
// `{"id","custom_id","response":{"status_code","request_id","body"},"error"}`, answers in the output file, failed
// requests (an upstream error answer, or none: cancelled, expired) in the error file.
import { createHash } from 'node:crypto';
import type { Charged } from './settle.ts';

export interface OutputTexts {
  output: string;
  error: string;
  completed: number;
  failed: number;
}

function reqId(batchId: string, customId: string): string {
  return createHash('sha256').update(`${batchId}\n${customId}`).digest('hex').slice(0, 24);
}

export function outputTexts(batchId: string, model: string, charged: Charged): OutputTexts {
  const out: string[] = [];
  const err: string[] = [];
  for (const { outcome, result } of charged.outcomes) {
    const id = reqId(batchId, outcome.customId);
    const ok = outcome.status >= 200 && outcome.status < 300;
    // The answer names the model the client asked for, as every answer of the gateway does.
    const body = ok && result.body && typeof result.body === 'object' && 'model' in result.body ? { ...result.body, model } : result.body;
    const response = result.status > 0 ? { status_code: result.status, request_id: `req_${id}`, body } : null;
    const line = JSON.stringify({ id: `batch_req_${id}`, custom_id: outcome.customId, response, error: result.error ?? null });
    (ok ? out : err).push(line);
  }
  const text = (lines: string[]): string => (lines.length > 0 ? `${lines.join('\n')}\n` : '');
  return { output: text(out), error: text(err), completed: out.length, failed: err.length };
}
