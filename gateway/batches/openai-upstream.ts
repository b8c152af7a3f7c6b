// OpenAI's Batch API (and Azure OpenAI's, the same wire format at Azure's URLs with its own auth): the lines
// uploaded as a file of purpose batch, a batch created on it, polled with GET /batches/{id}, and once it ended its
// output and error files downloaded and read line by line.
import type { CompiledTarget } from '../contract/snapshot.ts';
import { AzureAuth } from '../providers/azure-openai/auth.ts';
import { resourceEndpoint } from '../providers/azure-openai/urls.ts';
import { credentialValue } from '../providers/types.ts';
import { reportedTokens, type BatchUpstream, type PollResult } from './upstream.ts';
import type { BatchRecord, LineResult } from './types.ts';

interface UpstreamBatch {
  id: string;
  status: string;
  output_file_id?: string | null;
  error_file_id?: string | null;
  errors?: { data?: Array<{ code?: string; message?: string }> } | null;
}

interface OutputLine {
  custom_id: string;
  response?: { status_code: number; body: unknown } | null;
  error?: { code?: string; message?: string } | null;
}

const RUNNING = new Set(['validating', 'in_progress', 'finalizing', 'cancelling']);
const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

export class OpenAIBatchUpstream implements BatchUpstream {
  private readonly azure = new AzureAuth();

  private async base(t: CompiledTarget): Promise<{ url: (path: string) => string; headers: Record<string, string> }> {
    if (!t.baseUrl) throw new Error(`target ${t.name} has no baseUrl`);
    if (t.provider === 'azure-openai') {
      const root = resourceEndpoint(t.baseUrl);
      const headers = await this.azure.headers(t);
      if (t.apiVersion === undefined) return { url: (p) => `${root}/openai/v1${p}`, headers };
      const v = encodeURIComponent(t.apiVersion);
      return { url: (p) => `${root}/openai${p}${p.includes('?') ? '&' : '?'}api-version=${v}`, headers };
    }
    const key = credentialValue(t);
    const base = t.baseUrl.replace(/\/+$/, '');
    return { url: (p) => `${base}${p}`, headers: key ? { authorization: `Bearer ${key}` } : {} };
  }

  private async call(t: CompiledTarget, path: string, init: RequestInit = {}): Promise<Response> {
    const b = await this.base(t);
    const res = await fetch(b.url(path), {
      ...init,
      headers: { ...b.headers, ...(init.headers as Record<string, string>) },
      signal: AbortSignal.timeout(t.timeouts.totalMs),
    });
    if (!res.ok) {
      // The status only: an upstream's error text may echo what it was sent.
      await res.body?.cancel();
      throw new Error(`${t.provider} ${init.method ?? 'GET'} ${path.replace(/\?.*$/, '')} answered ${res.status}`);
    }
    return res;
  }

  async submit(b: BatchRecord, target: CompiledTarget, jsonl: string): Promise<string> {
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([jsonl], { type: 'application/jsonl' }), `${b.id}.jsonl`);
    const file = (await (await this.call(target, '/files', { method: 'POST', body: form })).json()) as { id: string };
    const created = await this.call(target, '/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: file.id, endpoint: b.endpoint, completion_window: b.completionWindow }),
    });
    return ((await created.json()) as UpstreamBatch).id;
  }

  async poll(b: BatchRecord, target: CompiledTarget): Promise<PollResult> {
    const up = (await (await this.call(target, `/batches/${encodeURIComponent(b.upstreamId ?? '')}`)).json()) as UpstreamBatch;
    if (RUNNING.has(up.status)) return { state: 'running', status: up.status as 'in_progress' };
    if (!ENDED.has(up.status)) throw new Error(`${target.provider} batch in an unknown status ${JSON.stringify(up.status)}`);
    const results: LineResult[] = [];
    for (const fileId of [up.output_file_id, up.error_file_id]) {
      if (!fileId) continue;
      const text = await (await this.call(target, `/files/${encodeURIComponent(fileId)}/content`)).text();
      for (const raw of text.split('\n')) if (raw.trim() !== '') results.push(resultOf(JSON.parse(raw) as OutputLine));
    }
    const errors = (up.errors?.data ?? []).map((e) => ({ code: e.code ?? 'upstream_error', message: e.message ?? 'The upstream refused the batch.' }));
    return { state: 'ended', status: up.status as 'completed', results, errors };
  }

  async cancel(b: BatchRecord, target: CompiledTarget): Promise<void> {
    if (b.upstreamId) await this.call(target, `/batches/${encodeURIComponent(b.upstreamId)}/cancel`, { method: 'POST' });
  }
}

function resultOf(l: OutputLine): LineResult {
  const status = l.response?.status_code ?? 0;
  const body = l.response?.body ?? null;
  const t = status >= 200 && status < 300 ? reportedTokens(body) : { input: 0, output: 0 };
  const error = l.error ? { code: l.error.code ?? 'upstream_error', message: l.error.message ?? '' } : undefined;
  return { customId: l.custom_id, status, body, inputTokens: t.input, outputTokens: t.output, ...(error ? { error } : {}) };
}
