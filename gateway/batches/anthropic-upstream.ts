// Anthropic's Message Batches API (api.anthropic.com, or a vendor speaking its wire format): the requests sent in one
// POST /v1/messages/batches, polled with GET /v1/messages/batches/{id}, and once ended its results (JSONL) read from
// /v1/messages/batches/{id}/results on the target's own base URL (never a URL the upstream names). Auth as the
// per-call provider: x-api-key and anthropic-version.
import type { CompiledTarget } from '../contract/snapshot.ts';
import { DEFAULT_ANTHROPIC_VERSION } from '../providers/anthropic/index.ts';
import { credentialValue } from '../providers/types.ts';
import { reportedTokens, type BatchUpstream, type PollResult } from './upstream.ts';
import type { BatchRecord, LineResult } from './types.ts';

interface UpstreamBatch {
  id: string;
  processing_status: 'in_progress' | 'canceling' | 'ended';
  cancel_initiated_at?: string | null;
}

interface ResultLine {
  custom_id: string;
  result: { type: string; message?: unknown; error?: { type?: string; error?: { type?: string; message?: string } } };
}

/** The HTTP status an errored line stands for (its error's type, as Anthropic's per-call answers use them). */
const STATUS_OF: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

export class AnthropicBatchUpstream implements BatchUpstream {
  private async call(t: CompiledTarget, path: string, init: RequestInit = {}): Promise<Response> {
    if (!t.baseUrl) throw new Error(`target ${t.name} has no baseUrl`);
    const headers: Record<string, string> = { 'anthropic-version': DEFAULT_ANTHROPIC_VERSION, ...(init.headers as Record<string, string>) };
    const key = credentialValue(t);
    if (key) headers['x-api-key'] = key;
    const res = await fetch(`${t.baseUrl.replace(/\/+$/, '')}${path}`, { ...init, headers, signal: AbortSignal.timeout(t.timeouts.totalMs) });
    if (!res.ok) {
      // The status only: an upstream's error text may echo what it was sent.
      await res.body?.cancel();
      throw new Error(`anthropic ${init.method ?? 'GET'} ${path} answered ${res.status}`);
    }
    return res;
  }

  private path(b: BatchRecord, tail = ''): string {
    return `/v1/messages/batches/${encodeURIComponent(b.upstreamId ?? '')}${tail}`;
  }

  async submit(_b: BatchRecord, target: CompiledTarget, jsonl: string): Promise<string> {
    const requests = jsonl
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const o = JSON.parse(l) as { custom_id: string; body: unknown };
        return { custom_id: o.custom_id, params: o.body };
      });
    const res = await this.call(target, '/v1/messages/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ requests }),
    });
    return ((await res.json()) as UpstreamBatch).id;
  }

  async poll(b: BatchRecord, target: CompiledTarget): Promise<PollResult> {
    const up = (await (await this.call(target, this.path(b))).json()) as UpstreamBatch;
    if (up.processing_status === 'in_progress') return { state: 'running', status: 'in_progress' };
    if (up.processing_status === 'canceling') return { state: 'running', status: 'cancelling' };
    if (up.processing_status !== 'ended') throw new Error(`anthropic batch in an unknown status ${JSON.stringify(up.processing_status)}`);
    const text = await (await this.call(target, this.path(b, '/results'))).text();
    const results: LineResult[] = [];
    for (const raw of text.split('\n')) if (raw.trim() !== '') results.push(resultOf(JSON.parse(raw) as ResultLine));
    const cancelled = typeof up.cancel_initiated_at === 'string';
    return { state: 'ended', status: cancelled ? 'cancelled' : 'completed', results, errors: [] };
  }

  async cancel(b: BatchRecord, target: CompiledTarget): Promise<void> {
    if (b.upstreamId) await this.call(target, this.path(b, '/cancel'), { method: 'POST' });
  }
}

function resultOf(l: ResultLine): LineResult {
  const none = { inputTokens: 0, outputTokens: 0 };
  switch (l.result.type) {
    case 'succeeded': {
      const t = reportedTokens(l.result.message);
      return { customId: l.custom_id, status: 200, body: l.result.message ?? null, inputTokens: t.input, outputTokens: t.output };
    }
    case 'errored': {
      const e = l.result.error;
      const status = STATUS_OF[e?.error?.type ?? ''] ?? 500;
      return { customId: l.custom_id, status, body: e ?? null, ...none };
    }
    case 'canceled':
      return { customId: l.custom_id, status: 0, body: null, ...none, error: { code: 'canceled', message: 'The batch was canceled before this request ran.' } };
    case 'expired':
      return { customId: l.custom_id, status: 0, body: null, ...none, error: { code: 'expired', message: 'The batch expired before this request ran.' } };
    default:
      return { customId: l.custom_id, status: 0, body: null, ...none, error: { code: 'upstream_error', message: 'The upstream gave an unknown result type.' } };
  }
}
