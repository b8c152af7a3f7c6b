// A fake provider on 127.0.0.1 for the endpoints beyond chat, each in its vendor's own wire format: OpenAI's legacy
// text completions (POST /v1/completions, streamed with `stream_options.include_usage` as OpenAI and vLLM send it),
// OpenAI's moderations (POST /v1/moderations: no usage in the answer), and rerank in the three shapes vendors answer
// POST {base}/rerank with: Cohere v2 (meta.billed_units.search_units, no model, no usage), Jina (model,
// usage.total_tokens, documents as {text}) and vLLM (id, model, usage.total_tokens); and Voyage AI's own shape at
// {url}/voyage/v1/rerank (top_k, data[{index, relevance_score, document?}], usage.total_tokens, documents as strings).
import type { ServerResponse } from 'node:http';
import { startRecordingServer, type RecordedCall } from './recording-server.ts';

export type RerankFlavor = 'cohere' | 'jina' | 'vllm';

export interface TextUpstream {
  url: string;
  /** Base URL as the clients take it: {url}/v1 (Cohere's is {url}/v2: see cohereBaseUrl). */
  baseUrl: string;
  cohereBaseUrl: string;
  /** Voyage AI's base URL as its clients take it (https://api.voyageai.com/v1 in production). */
  voyageBaseUrl: string;
  calls: RecordedCall[];
  /** The completion text each choice gets, and the usage the next answers report. */
  completion: { text: string; promptTokens: number; completionTokens: number; gate: Promise<void> | null };
  /** Tokens a rerank answer reports (Jina, vLLM); Cohere reports search units instead. */
  rerankTokens: number;
  /** Holds every rerank answer until it resolves (calls in flight together, whatever the machine's speed). */
  rerankGate: Promise<void> | null;
  close(): Promise<void>;
}

export async function startTextUpstream(): Promise<TextUpstream> {
  const http = await startRecordingServer((call, res) => void answer(fake, call, res));
  const fake: TextUpstream = {
    url: http.url,
    baseUrl: `${http.url}/v1`,
    cohereBaseUrl: `${http.url}/v2`,
    voyageBaseUrl: `${http.url}/voyage/v1`,
    calls: http.calls,
    completion: { text: ' return a + b', promptTokens: 9, completionTokens: 5, gate: null },
    rerankTokens: 42,
    rerankGate: null,
    close: http.close,
  };
  return fake;
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

async function answer(fake: TextUpstream, call: RecordedCall, res: ServerResponse): Promise<void> {
  if (call.path === '/v1/completions') return completions(fake, call, res);
  if (call.path === '/v1/moderations') return moderations(call, res);
  if (call.path === '/v2/rerank') return rerank(fake, call, res, 'cohere');
  if (call.path === '/voyage/v1/rerank') return voyageRerank(fake, call, res);
  if (call.path === '/v1/rerank') return rerank(fake, call, res, call.body.model === 'jina-reranker-v2' ? 'jina' : 'vllm');
  json(res, 404, { error: { message: `no route ${call.path}`, type: 'invalid_request_error' } });
}

async function completions(fake: TextUpstream, call: RecordedCall, res: ServerResponse): Promise<void> {
  const c = fake.completion;
  // Held until the test opens the gate (calls in flight together, whatever the machine's speed).
  if (c.gate) await c.gate;
  const b = call.body;
  const n = typeof b.n === 'number' ? b.n : 1;
  const id = 'cmpl-fake-1';
  const created = 1_767_225_600;
  const usage = { prompt_tokens: c.promptTokens, completion_tokens: c.completionTokens, total_tokens: c.promptTokens + c.completionTokens };
  const prefix = b.echo === true ? String(b.prompt) : '';
  const logprobs =
    typeof b.logprobs === 'number' ? { tokens: [c.text], token_logprobs: [-0.5], top_logprobs: [{ [c.text]: -0.5 }], text_offset: [prefix.length] } : null;
  if (b.stream !== true) {
    const choices = Array.from({ length: n }, (_, index) => ({ index, text: prefix + c.text, logprobs, finish_reason: 'stop' }));
    return json(res, 200, { id, object: 'text_completion', created, model: b.model, system_fingerprint: 'fp_fake', choices, usage });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const frame = (choices: object[], extra: object = {}): string =>
    `data: ${JSON.stringify({ id, object: 'text_completion', created, model: b.model, choices, ...extra })}\n\n`;
  const each = (text: string, finish: string | null): object[] =>
    Array.from({ length: n }, (_, index) => ({ index, text, logprobs: null, finish_reason: finish }));
  const pieces = (prefix + c.text).split(/(?<= )/);
  for (const p of pieces) res.write(frame(each(p, null)));
  res.write(frame(each('', 'stop')));
  if ((b.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true) res.write(frame([], { usage }));
  res.end('data: [DONE]\n\n');
}

const CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/instructions',
  'self-harm/intent',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
];

/** The categories OpenAI also judges images for (the others apply to text only). */
const IMAGE_CATEGORIES = new Set(['self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'violence', 'violence/graphic']);

function moderations(call: RecordedCall, res: ServerResponse): void {
  const input = call.body.input;
  const items =
    typeof input === 'string' ? [input] : Array.isArray(input) && input.every((x) => typeof x === 'string') ? (input as string[]) : [JSON.stringify(input)];
  const image = Array.isArray(input) && input.some((p) => (p as { type?: unknown }).type === 'image_url');
  const results = items.map((t) => {
    const flagged = /kill/i.test(t);
    return {
      flagged,
      categories: Object.fromEntries(CATEGORIES.map((k) => [k, flagged && k === 'violence'])),
      category_scores: Object.fromEntries(CATEGORIES.map((k) => [k, flagged && k === 'violence' ? 0.93 : 0.0002])),
      category_applied_input_types: Object.fromEntries(CATEGORIES.map((k) => [k, image && IMAGE_CATEGORIES.has(k) ? ['text', 'image'] : ['text']])),
    };
  });
  json(res, 200, { id: 'modr-fake-1', model: call.body.model, results });
}

async function rerank(fake: TextUpstream, call: RecordedCall, res: ServerResponse, flavor: RerankFlavor): Promise<void> {
  if (fake.rerankGate) await fake.rerankGate;
  const docs = (call.body.documents as unknown[]) ?? [];
  const topN = typeof call.body.top_n === 'number' ? call.body.top_n : docs.length;
  const text = (d: unknown): string => (typeof d === 'string' ? d : String((d as { text?: unknown }).text));
  // Ranked in reverse order of position, with scores that say so.
  const ranked = docs
    .map((d, index) => ({ index, relevance_score: Math.round((1 - index / (docs.length + 1)) * 1000) / 1000, d }))
    .reverse()
    .slice(0, topN);
  const withDoc = call.body.return_documents === true;
  if (flavor === 'cohere') {
    const results = ranked.map((r) => ({ index: r.index, relevance_score: r.relevance_score, ...(withDoc ? { document: { text: text(r.d) } } : {}) }));
    return json(res, 200, {
      id: 'rerank-cohere-1',
      results,
      meta: { api_version: { version: '2' }, billed_units: { search_units: Math.ceil(docs.length / 100) } },
    });
  }
  const results = ranked.map((r) => ({ index: r.index, relevance_score: r.relevance_score, document: { text: text(r.d) } }));
  if (flavor === 'jina') return json(res, 200, { model: call.body.model, usage: { total_tokens: fake.rerankTokens }, results });
  json(res, 200, { id: 'rerank-vllm-1', model: call.body.model, usage: { total_tokens: fake.rerankTokens }, results });
}

/** Voyage AI's rerank: its own field names, strings only, and its error shape ({detail}) for anything else. */
function voyageRerank(fake: TextUpstream, call: RecordedCall, res: ServerResponse): void {
  const b = call.body;
  const docs = b.documents;
  const allowed = new Set(['query', 'documents', 'model', 'top_k', 'return_documents', 'truncation']);
  const extra = Object.keys(b).filter((k) => !allowed.has(k));
  if (extra.length > 0) return json(res, 400, { detail: `Unexpected fields: ${extra.join(', ')}` });
  if (typeof b.query !== 'string' || !Array.isArray(docs) || !docs.every((d) => typeof d === 'string'))
    return json(res, 400, { detail: 'query must be a string and documents a list of strings' });
  const topK = typeof b.top_k === 'number' ? b.top_k : docs.length;
  const data = (docs as string[])
    .map((d, index) => ({
      relevance_score: Math.round((1 - index / (docs.length + 1)) * 1000) / 1000,
      index,
      ...(b.return_documents === true ? { document: d } : {}),
    }))
    .reverse()
    .slice(0, topK);
  json(res, 200, { object: 'list', data, model: b.model, usage: { total_tokens: fake.rerankTokens } });
}
