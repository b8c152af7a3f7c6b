// A Message Batch run on an OpenAI-protocol batch API (OpenAI, Azure OpenAI, the built-in mock): each request
// translated to Chat Completions as the per-call route translates it (translate/anthropic/anthropic-openai-request.ts),
// the batch run by that API's own BatchUpstream on /v1/chat/completions, and each answer translated back to a
// Messages answer (an error answer to Anthropic's error shape). The line's tokens are the ones the upstream reported.
import type { CompiledTarget } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import { toAnthropicMessage } from '../translate/anthropic/anthropic-openai.ts';
import { toOpenAIChat } from '../translate/anthropic/anthropic-openai-request.ts';
import { isObject, type Json } from '../translate/json-read.ts';
import type { BatchUpstream, PollResult } from './upstream.ts';
import type { BatchRecord, LineResult } from './types.ts';

const CHAT = '/v1/chat/completions' as const;

/** The batch's lines as Chat Completions lines for the target's upstream model (a 400 for content it cannot take). */
export function chatLines(jsonl: string, upstreamModel: string): string {
  return jsonl
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const o = JSON.parse(l) as { custom_id: string; body: Json };
      return JSON.stringify({ custom_id: o.custom_id, method: 'POST', url: CHAT, body: toOpenAIChat(o.body, upstreamModel) });
    })
    .join('\n')
    .concat('\n');
}

/** Refuses, before anything is held, a request an OpenAI-protocol upstream cannot take (documents, server tools...). */
export function checkTranslatable(params: readonly Json[], upstreamModel: string): void {
  params.forEach((p, i) => {
    try {
      toOpenAIChat(p, upstreamModel);
    } catch (err) {
      if (err instanceof GatewayError) throw new GatewayError(err.code, `requests.${i}: params.${err.message}`, { param: `requests.${i}` });
      throw err;
    }
  });
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
};

function backToMessages(r: LineResult, model: string): LineResult {
  if (r.status >= 200 && r.status < 300 && isObject(r.body)) return { ...r, body: toAnthropicMessage(r.body, model).message };
  if (r.status === 0 || r.body === null) return r;
  const e = isObject(r.body) && isObject(r.body.error) ? r.body.error : {};
  const message = typeof e.message === 'string' ? e.message : `The upstream answered ${r.status}.`;
  return { ...r, body: { type: 'error', error: { type: ERROR_TYPES[r.status] ?? 'api_error', message } } };
}

export class MessagesOverOpenAI implements BatchUpstream {
  private readonly inner: BatchUpstream;

  constructor(inner: BatchUpstream) {
    this.inner = inner;
  }

  private asChat(b: BatchRecord): BatchRecord {
    return { ...b, endpoint: CHAT };
  }

  submit(b: BatchRecord, target: CompiledTarget, jsonl: string): Promise<string> {
    return this.inner.submit(this.asChat(b), target, chatLines(jsonl, target.upstreamModel));
  }

  async poll(b: BatchRecord, target: CompiledTarget, input: () => Promise<string | null>): Promise<PollResult> {
    const chatInput = async (): Promise<string | null> => {
      const text = await input();
      return text === null ? null : chatLines(text, target.upstreamModel);
    };
    const r = await this.inner.poll(this.asChat(b), target, chatInput);
    if (r.state === 'running') return r;
    return { ...r, results: r.results.map((x) => backToMessages(x, b.model)) };
  }

  cancel(b: BatchRecord, target: CompiledTarget): Promise<void> {
    return this.inner.cancel(this.asChat(b), target);
  }
}
