// A fake Azure OpenAI resource on 127.0.0.1: the v1 API (/openai/v1/..., the deployment in the body's model, no
// api-version) and the dated API (/openai/deployments/{deployment}/...?api-version=), `api-key` or an Entra ID
// bearer token (checked against the fake Entra's issued tokens), Azure's content filter (a prompt with FILTER_PROMPT
// gets the 400 content_filter error; with FILTER_COMPLETION, a completion cut with finish_reason content_filter) and
// Azure's stream quirks: a first chunk with empty choices carrying prompt_filter_results, content_filter_results on
// the chunks, and a trailing choice with no delta that only carries the completion's filter results. Answer shapes
// follow published Azure answers (the openai-cookbook's Azure examples and answers recorded in public test suites).
import type { ServerResponse } from 'node:http';
import { startRecordingServer, type RecordedCall } from '../recording-server.ts';
import { isProbe } from '../upstream.ts';
import type { FakeEntra } from './entra.ts';

export const FILTER_PROMPT = 'forbidden-topic';
export const FILTER_COMPLETION = 'filtered-completion';
export const AZURE_REPLY = 'Hello from the fake Azure OpenAI.';

export type AzureBehavior =
  | {
      kind: 'reply';
      content?: string;
      usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
      toolCalls?: Array<{ name: string; arguments: string }>;
      /** Streams: the pause between chunks. */
      chunkDelayMs?: number;
    }
  | { kind: 'status'; status: number; body?: unknown; retryAfter?: string }
  /** An answer given byte for byte (a recording of real Azure traffic), once the request passed the fake's checks. */
  | { kind: 'raw'; status: number; body: string; contentType: string };

export interface FakeAzureOpenAI {
  /** The resource endpoint (https://{resource}.openai.azure.com in real life). */
  url: string;
  apiKey: string;
  calls: RecordedCall[];
  /** Deployments it has: name -> chat or embeddings. */
  deployments: Map<string, 'chat' | 'embeddings'>;
  /** Calls answered with a model's answer (not refused for auth, shape or filter), by URL shape. */
  answered: { v1: number; dated: number };
  /** Tokens of the answers it gave in full (probes included; a stream counts once it ended), to check usage. */
  served: { prompt: number; completion: number };
  /** Requests whose answer has not closed yet, and TCP connections open to it (idle keep-alive ones included). */
  readonly open: number;
  readonly sockets: number;
  enqueue(...b: AzureBehavior[]): void;
  /** The behaviour when the queue is empty (a reply by default). */
  fallback: (call: RecordedCall) => AzureBehavior;
  close(): Promise<void>;
}

const SAFE = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};
const PROMPT_FILTER_RESULTS = [{ prompt_index: 0, content_filter_results: { ...SAFE, jailbreak: { filtered: false, detected: false } } }];
const VIOLENT = { ...SAFE, violence: { filtered: true, severity: 'medium' } };

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'apim-request-id': 'fake', ...headers }).end(JSON.stringify(body));
}

function azureError(res: ServerResponse, status: number, code: string, message: string): void {
  send(res, status, { error: { code, message } });
}

/** Every text of the request (messages' contents, input), to look for the trigger words. */
function textOf(body: Record<string, unknown>): string {
  return JSON.stringify([body.messages ?? null, body.input ?? null]);
}

export async function startFakeAzureOpenAI(opts: {
  apiKey: string;
  entra?: FakeEntra;
  deployments: Record<string, 'chat' | 'embeddings'>;
}): Promise<FakeAzureOpenAI> {
  const queue: AzureBehavior[] = [];
  const http = await startRecordingServer((call, res) => answer(fake, call, res));
  const fake: FakeAzureOpenAI = {
    url: http.url,
    apiKey: opts.apiKey,
    calls: http.calls,
    deployments: new Map(Object.entries(opts.deployments)),
    answered: { v1: 0, dated: 0 },
    served: { prompt: 0, completion: 0 },
    get open() {
      return http.open;
    },
    get sockets() {
      return http.sockets;
    },
    enqueue: (...b) => queue.push(...b),
    fallback: () => ({ kind: 'reply' }),
    close: http.close,
  };

  function authorized(call: RecordedCall): boolean {
    const key = call.headers['api-key'];
    if (key !== undefined) return key === opts.apiKey;
    const m = /^Bearer (.+)$/.exec(String(call.headers.authorization ?? ''));
    return m !== null && opts.entra !== undefined && opts.entra.valid(m[1] as string);
  }

  function answer(f: FakeAzureOpenAI, call: RecordedCall, res: ServerResponse): void {
    const url = new URL(call.path, 'http://x');
    const apiVersion = url.searchParams.get('api-version');
    let deployment: string;
    let op: string;
    let shape: 'v1' | 'dated';
    const dated = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(url.pathname);
    const v1 = /^\/openai\/v1\/(chat\/completions|embeddings|responses)$/.exec(url.pathname);
    if (dated) {
      if (!apiVersion) return azureError(res, 404, '404', 'Resource not found');
      deployment = decodeURIComponent(dated[1] as string);
      op = dated[2] as string;
      shape = 'dated';
    } else if (v1) {
      if (apiVersion !== null) return azureError(res, 400, 'BadRequest', 'api-version query parameter is not allowed when using /v1 path');
      deployment = String(call.body.model ?? '');
      op = v1[1] as string;
      shape = 'v1';
    } else {
      return azureError(res, 404, '404', 'Resource not found');
    }
    if (!authorized(call)) {
      return azureError(
        res,
        401,
        '401',
        'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
      );
    }
    const kind = f.deployments.get(deployment);
    if (!kind || (kind === 'embeddings') !== (op === 'embeddings')) {
      return azureError(
        res,
        404,
        'DeploymentNotFound',
        'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
      );
    }
    // A probe of the gateway's availability job (it comes at any moment) never takes a queued behaviour.
    const b = (isProbe(call) ? undefined : queue.shift()) ?? f.fallback(call);
    if (b.kind === 'status') {
      return send(
        res,
        b.status,
        b.body ?? { error: { code: String(b.status), message: `fake Azure failed with ${b.status}` } },
        b.retryAfter ? { 'retry-after': b.retryAfter } : {},
      );
    }
    if (b.kind === 'raw') {
      f.answered[shape]++;
      res.writeHead(b.status, { 'content-type': b.contentType }).end(b.body);
      return;
    }
    if (op !== 'embeddings' && textOf(call.body).includes(FILTER_PROMPT)) {
      return send(res, 400, {
        error: {
          message:
            "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
          type: null,
          param: 'prompt',
          code: 'content_filter',
          status: 400,
          innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { ...VIOLENT, jailbreak: { filtered: false, detected: false } } },
        },
      });
    }
    f.answered[shape]++;
    if (op === 'embeddings') return embeddings(f, call, res);
    if (op === 'responses') return responses(f, call, res, b);
    return chat(f, call, res, b);
  }
  return fake;
}

function usageOf(u: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number }): object {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function chat(f: FakeAzureOpenAI, call: RecordedCall, res: ServerResponse, b: Extract<AzureBehavior, { kind: 'reply' }>): void {
  const filtered = textOf(call.body).includes(FILTER_COMPLETION);
  const toolCalls = b.toolCalls ?? [];
  const content = filtered ? 'The first words, then' : (b.content ?? (toolCalls.length > 0 ? '' : AZURE_REPLY));
  const usage = b.usage ?? { prompt_tokens: 13, completion_tokens: filtered ? 5 : 9 };
  const finish = filtered ? 'content_filter' : toolCalls.length > 0 ? 'tool_calls' : 'stop';
  const completionFilter = filtered ? VIOLENT : SAFE;
  const count = (): void => {
    f.served.prompt += usage.prompt_tokens;
    f.served.completion += usage.completion_tokens;
  };
  // Azure names the model behind the deployment, not the deployment.
  const model = 'gpt-4o-2024-11-20';
  const calls = toolCalls.map((t, i) => ({ id: `call_az_${i}`, type: 'function', function: { name: t.name, arguments: t.arguments } }));
  if (call.body.stream !== true) {
    count();
    return send(res, 200, {
      id: 'chatcmpl-AzFake1',
      object: 'chat.completion',
      created: 1_764_000_000,
      model,
      system_fingerprint: 'fp_fake',
      prompt_filter_results: PROMPT_FILTER_RESULTS,
      choices: [
        {
          index: 0,
          finish_reason: finish,
          logprobs: null,
          message: {
            role: 'assistant',
            content: toolCalls.length > 0 && content === '' ? null : content,
            refusal: null,
            annotations: [],
            ...(calls.length ? { tool_calls: calls } : {}),
          },
          content_filter_results: completionFilter,
        },
      ],
      usage: usageOf(usage),
    });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'apim-request-id': 'fake' });
  const withUsage = (call.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const base = { id: 'chatcmpl-AzFake1', object: 'chat.completion.chunk', created: 1_764_000_000, model, system_fingerprint: 'fp_fake' };
  const u = withUsage ? { usage: null } : {};
  const frames: object[] = [
    // Azure's first chunk: no choices, no id or model, the prompt's filter results.
    { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER_RESULTS },
    {
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, finish_reason: null, logprobs: null, content_filter_results: {} }],
      ...u,
    },
    ...content
      .split(/(?<= )/)
      .filter((p) => p !== '')
      .map((p) => ({ ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null, logprobs: null, content_filter_results: SAFE }], ...u })),
    ...calls.map((c, index) => ({
      ...base,
      choices: [{ index: 0, delta: { tool_calls: [{ index, ...c }] }, finish_reason: null, logprobs: null, content_filter_results: {} }],
      ...u,
    })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish, logprobs: null, content_filter_results: {} }], ...u },
    // The completion's filter results for the last stretch of text: a choice with no delta.
    {
      ...base,
      choices: [
        {
          index: 0,
          finish_reason: null,
          content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: content.length },
          content_filter_results: completionFilter,
        },
      ],
      ...u,
    },
    ...(withUsage ? [{ ...base, choices: [], usage: usageOf(usage) }] : []),
  ];
  void (async () => {
    for (const fr of frames) {
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify(fr)}\n\n`);
      if (b.chunkDelayMs) await new Promise((r) => setTimeout(r, b.chunkDelayMs));
    }
    count();
    res.end('data: [DONE]\n\n');
  })();
}

function embeddings(f: FakeAzureOpenAI, call: RecordedCall, res: ServerResponse): void {
  const input = call.body.input;
  const inputs = Array.isArray(input) ? input : [input];
  const tokens = inputs.length * 4;
  f.served.prompt += tokens;
  const vector = (i: number): number[] => [0.25, -0.5, 0.125, i];
  const b64 = call.body.encoding_format === 'base64';
  send(res, 200, {
    object: 'list',
    model: 'text-embedding-3-small',
    data: inputs.map((_t, index) => ({
      object: 'embedding',
      index,
      embedding: b64 ? Buffer.from(new Float32Array(vector(index)).buffer).toString('base64') : vector(index),
    })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

function responses(f: FakeAzureOpenAI, call: RecordedCall, res: ServerResponse, b: Extract<AzureBehavior, { kind: 'reply' }>): void {
  const text = b.content ?? AZURE_REPLY;
  const usage = b.usage ?? { prompt_tokens: 13, completion_tokens: 9 };
  f.served.prompt += usage.prompt_tokens;
  f.served.completion += usage.completion_tokens;
  const item = { id: 'msg_az1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
  const u = {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
  const resp = (status: string, output: object[], usage: object | null): object => ({
    id: 'resp_az1',
    object: 'response',
    created_at: 1_764_000_000,
    status,
    model: 'gpt-4o-2024-11-20',
    output,
    usage,
    content_filters: null,
  });
  if (call.body.stream !== true) return send(res, 200, resp('completed', [item], u));
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  let seq = 0;
  const ev = (type: string, data: object): void => void res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  ev('response.created', { response: resp('in_progress', [], null) });
  ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
  ev('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
  for (const p of text.split(/(?<= )/)) ev('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: p });
  ev('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text });
  ev('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: item.content[0] });
  ev('response.output_item.done', { output_index: 0, item });
  ev('response.completed', { response: resp('completed', [item], u) });
  res.end();
}
