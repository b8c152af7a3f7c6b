// A loopback Anthropic Message Batches API (as api.anthropic.com serves it): POST /v1/messages/batches,
// GET /v1/messages/batches/{id}, POST .../{id}/cancel, GET .../{id}/results (JSONL). A batch ends at its second poll
// (or once cancelled: its requests then canceled); each request is answered with a message whose usage is fixed
// (`fail-*` custom_ids are errored with an invalid_request_error). It checks the key and anthropic-version as the
// service does. Its shapes are checked by driving it with @anthropic-ai/sdk.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAnthropicBatches {
  baseUrl: string;
  /** The requests each created batch carried, by upstream batch id. */
  created: Map<string, Array<{ custom_id: string; params: { model: string } }>>;
  /** Usage each succeeded request reports. */
  usage: { input_tokens: number; output_tokens: number };
  cancels: string[];
  /** `stuck`: batches never end, cancelled or not (an upstream that is down or late). */
  mode: { stuck: boolean };
  close(): Promise<void>;
}

interface Batch {
  id: string;
  createdAt: string;
  polls: number;
  cancelAt: string | null;
  endedAt: string | null;
}

export async function startAnthropicBatchUpstream(apiKey = 'sk-ant-test'): Promise<FakeAnthropicBatches> {
  const created = new Map<string, Array<{ custom_id: string; params: { model: string } }>>();
  const batches = new Map<string, Batch>();
  const usage = { input_tokens: 11, output_tokens: 7 };
  const cancels: string[] = [];
  const mode = { stuck: false };
  let n = 0;
  let base = '';
  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++n}` }).end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, status: number, type: string, message: string): void => json(res, status, { type: 'error', error: { type, message } });
  const view = (b: Batch): unknown => {
    const total = created.get(b.id)?.length ?? 0;
    const ended = b.endedAt !== null;
    const fails = (created.get(b.id) ?? []).filter((r) => r.custom_id.startsWith('fail-')).length;
    return {
      id: b.id,
      type: 'message_batch',
      processing_status: ended ? 'ended' : b.cancelAt ? 'canceling' : 'in_progress',
      request_counts: ended
        ? b.cancelAt
          ? { processing: 0, succeeded: 0, errored: 0, canceled: total, expired: 0 }
          : { processing: 0, succeeded: total - fails, errored: fails, canceled: 0, expired: 0 }
        : { processing: total, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: b.endedAt,
      created_at: b.createdAt,
      expires_at: new Date(Date.parse(b.createdAt) + 86_400_000).toISOString(),
      archived_at: null,
      cancel_initiated_at: b.cancelAt,
      results_url: ended ? `${base}/v1/messages/batches/${b.id}/results` : null,
    };
  };
  const resultOf = (b: Batch, r: { custom_id: string; params: { model: string } }): unknown => {
    if (b.cancelAt) return { custom_id: r.custom_id, result: { type: 'canceled' } };
    if (r.custom_id.startsWith('fail-'))
      return {
        custom_id: r.custom_id,
        result: { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too large' }, request_id: null } },
      };
    return {
      custom_id: r.custom_id,
      result: {
        type: 'succeeded',
        message: {
          id: `msg_${r.custom_id}`,
          type: 'message',
          role: 'assistant',
          model: r.params.model,
          content: [{ type: 'text', text: `answer to ${r.custom_id}` }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      },
    };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      // The key as x-api-key (what the gateway sends) or a bearer token (what @anthropic-ai/sdk 1.x sends).
      if (req.headers['x-api-key'] !== apiKey && req.headers.authorization !== `Bearer ${apiKey}`)
        return error(res, 401, 'authentication_error', 'invalid x-api-key');
      if (!req.headers['anthropic-version']) return error(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
      const m = /^\/v1\/messages\/batches(?:\/([^/]+))?(\/cancel|\/results)?$/.exec(url.pathname);
      if (!m) return error(res, 404, 'not_found_error', 'Not found');
      const [, id, tail] = m;
      if (req.method === 'POST' && !id) {
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { requests?: Array<{ custom_id: string; params: { model: string } }> };
        if (!Array.isArray(body.requests) || body.requests.length === 0) return error(res, 400, 'invalid_request_error', 'requests: required');
        const b: Batch = { id: `msgbatch_up${++n}`, createdAt: new Date().toISOString(), polls: 0, cancelAt: null, endedAt: null };
        batches.set(b.id, b);
        created.set(b.id, body.requests);
        return json(res, 200, view(b));
      }
      const b = id ? batches.get(id) : undefined;
      if (!b) return error(res, 404, 'not_found_error', `No batch ${id ?? ''}`);
      if (req.method === 'POST' && tail === '/cancel') {
        cancels.push(b.id);
        b.cancelAt ??= new Date().toISOString();
        return json(res, 200, view(b));
      }
      if (req.method === 'GET' && tail === '/results') {
        if (!b.endedAt) return error(res, 400, 'invalid_request_error', 'Batch has not ended');
        const text = (created.get(b.id) ?? []).map((r) => JSON.stringify(resultOf(b, r))).join('\n');
        return res.writeHead(200, { 'content-type': 'application/binary' }).end(`${text}\n`);
      }
      if (req.method === 'GET' && !tail) {
        b.polls += 1;
        if (!mode.stuck && (b.polls >= 2 || b.cancelAt)) b.endedAt ??= new Date().toISOString();
        return json(res, 200, view(b));
      }
      return error(res, 404, 'not_found_error', 'Not found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: base,
    created,
    usage,
    cancels,
    mode,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
