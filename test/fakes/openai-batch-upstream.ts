// A loopback OpenAI Batch API (files and batches, as api.openai.com serves them): POST /v1/files (multipart, purpose
// batch), POST /v1/batches, GET /v1/batches/{id}, POST /v1/batches/{id}/cancel, GET /v1/files/{id}/content. A batch
// completes at its second poll; each chat line is answered with a completion whose usage is fixed by its custom_id
// (`fail-*` lines get a 400 in the error file). Its shapes are checked by driving it with the openai SDK.
// With `azure` it is an Azure OpenAI resource's Batch API instead (checked with the SDK's AzureOpenAI client): the
// same routes under /openai/v1 (the v1 API) or under /openai with an `api-version` query (the dated API), and every
// call must carry the resource's key in `api-key`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BatchUpstream {
  baseUrl: string;
  /** The lines each uploaded file carried (parsed), by upstream file id. */
  uploads: Map<string, Array<{ custom_id: string; body: { model: string } }>>;
  /** Every call it answered: method, path (without the query), api-version, and whether its credential was right. */
  requests: Array<{ method: string; path: string; apiVersion: string | null; authorized: boolean }>;
  /** Usage each answered line reports. */
  usage: { prompt_tokens: number; completion_tokens: number };
  close(): Promise<void>;
}

interface Batch {
  id: string;
  object: 'batch';
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: string;
  created_at: number;
  output_file_id?: string;
  error_file_id?: string;
  polls: number;
}

export async function startOpenAIBatchUpstream(opts: { azure?: { apiKey: string } } = {}): Promise<BatchUpstream> {
  const requests: BatchUpstream['requests'] = [];
  const uploads = new Map<string, Array<{ custom_id: string; body: { model: string } }>>();
  const files = new Map<string, string>();
  const batches = new Map<string, Batch>();
  const usage = { prompt_tokens: 11, completion_tokens: 7 };
  let n = 0;
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const view = (b: Batch): Omit<Batch, 'polls'> => {
    const { polls: _polls, ...rest } = b;
    return rest;
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const body = Buffer.concat(chunks);
        if (opts.azure) {
          // Azure's two URL shapes, answered as the OpenAI routes below.
          const apiVersion = url.searchParams.get('api-version');
          const authorized = req.headers['api-key'] === opts.azure.apiKey;
          requests.push({ method: req.method ?? '', path: url.pathname, apiVersion, authorized });
          if (!authorized) return json(res, 401, { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } });
          const v1 = url.pathname.startsWith('/openai/v1/');
          if (!v1 && !(url.pathname.startsWith('/openai/') && apiVersion)) return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
          url.pathname = v1 ? url.pathname.slice('/openai'.length) : `/v1${url.pathname.slice('/openai'.length)}`;
        } else requests.push({ method: req.method ?? '', path: url.pathname, apiVersion: null, authorized: true });
        if (req.method === 'POST' && url.pathname === '/v1/files') {
          const form = await new Request('http://x/', { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body }).formData();
          const file = form.get('file');
          if (form.get('purpose') !== 'batch' || !(file instanceof Blob)) return json(res, 400, { error: { message: 'purpose batch and a file' } });
          const id = `file-up${++n}`;
          const text = await file.text();
          uploads.set(
            id,
            text
              .split('\n')
              .filter((l) => l.trim() !== '')
              .map((l) => JSON.parse(l) as { custom_id: string; body: { model: string } }),
          );
          return json(res, 200, { id, object: 'file', bytes: file.size, created_at: 1, filename: 'in.jsonl', purpose: 'batch', status: 'processed' });
        }
        if (req.method === 'POST' && url.pathname === '/v1/batches') {
          const b = JSON.parse(body.toString()) as { input_file_id: string; endpoint: string; completion_window: string };
          if (!uploads.has(b.input_file_id)) return json(res, 404, { error: { message: 'no such file' } });
          const batch: Batch = { id: `batch_up${++n}`, object: 'batch', ...b, status: 'validating', created_at: 1, polls: 0 };
          batches.set(batch.id, batch);
          return json(res, 200, view(batch));
        }
        const m = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(url.pathname);
        if (m) {
          const batch = batches.get(m[1] ?? '');
          if (!batch) return json(res, 404, { error: { message: 'no such batch' } });
          if (m[2]) batch.status = 'cancelling';
          else if (++batch.polls >= 2 && batch.status !== 'completed') finish(batch);
          return json(res, 200, view(batch));
        }
        const f = /^\/v1\/files\/([^/]+)\/content$/.exec(url.pathname);
        if (f && files.has(f[1] ?? '')) {
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(files.get(f[1] ?? ''));
          return;
        }
        json(res, 404, { error: { message: `no route ${req.method} ${url.pathname}` } });
      })();
    });
  });

  function finish(batch: Batch): void {
    const lines = uploads.get(batch.input_file_id) ?? [];
    const out: string[] = [];
    const err: string[] = [];
    for (const l of lines) {
      if (l.custom_id.startsWith('fail-')) {
        err.push(
          JSON.stringify({
            id: `r-${l.custom_id}`,
            custom_id: l.custom_id,
            response: { status_code: 400, request_id: 'x', body: { error: { message: 'bad', type: 'invalid_request_error' } } },
            error: null,
          }),
        );
        continue;
      }
      const completion = {
        id: `chatcmpl-${l.custom_id}`,
        object: 'chat.completion',
        created: 1,
        model: l.body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, logprobs: null, finish_reason: 'stop' }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      };
      out.push(
        JSON.stringify({ id: `r-${l.custom_id}`, custom_id: l.custom_id, response: { status_code: 200, request_id: 'x', body: completion }, error: null }),
      );
    }
    batch.status = batch.status === 'cancelling' ? 'cancelled' : 'completed';
    if (out.length > 0) files.set((batch.output_file_id = `file-out${++n}`), `${out.join('\n')}\n`);
    if (err.length > 0) files.set((batch.error_file_id = `file-err${++n}`), `${err.join('\n')}\n`);
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: opts.azure ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`,
    requests,
    uploads,
    usage,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
