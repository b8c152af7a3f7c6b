// The mock provider's legacy completions (fill-in-the-middle included), rerank and moderations: deterministic
// answers in the OpenAI (and, for rerank, Cohere v2 / Jina / vLLM) wire format, so the offline demo serves each.
import { setTimeout as sleep } from 'node:timers/promises';
import type { UpstreamOutcome } from '../types.ts';
import { mockTokens } from './reply.ts';

interface CompletionsBody {
  model: string;
  prompt: unknown;
  suffix?: string | null;
  echo?: boolean | null;
  logprobs?: number | null;
  n?: number | null;
  best_of?: number | null;
  max_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
}

const promptsOf = (p: unknown): string[] => (Array.isArray(p) ? p.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))) : [String(p ?? '')]);

/** The completion as pieces (one per output token): a FIM completion bridges the prompt and the suffix. */
function completionPieces(prompt: string, suffix: string | null | undefined, max: number | undefined): { pieces: string[]; truncated: boolean } {
  const tail = prompt.trim().split(/\s+/).at(-1) ?? '';
  const text = suffix
    ? ` /* mock fill between ${JSON.stringify(tail)} and ${JSON.stringify(suffix.trim().slice(0, 40))} */ `
    : ` and so on after ${JSON.stringify(tail)}.`;
  const pieces = text.split(/(?<= )/).filter((p) => p !== '');
  if (max !== undefined && pieces.length > max) return { pieces: pieces.slice(0, max), truncated: true };
  return { pieces, truncated: false };
}

function logprobsOf(pieces: string[]): object {
  let offset = 0;
  const text_offset = pieces.map((p) => ((offset += p.length), offset - p.length));
  return { tokens: pieces, token_logprobs: pieces.map(() => -0.25), top_logprobs: pieces.map((p) => ({ [p]: -0.25 })), text_offset };
}

export function mockCompletions(body: CompletionsBody, stream: boolean, delayMs: number, signal: AbortSignal): UpstreamOutcome {
  const id = `cmpl-mock-${Date.now().toString(36)}`;
  const created = Math.floor(Date.now() / 1000);
  const prompts = promptsOf(body.prompt);
  const n = Math.max(1, body.n ?? 1);
  // The upstream generates best_of candidates per prompt and bills them all.
  const generated = Math.max(n, body.best_of ?? 1);
  const answers = prompts.map((p) => completionPieces(p, body.suffix, body.max_tokens));
  const usage = {
    prompt_tokens: prompts.reduce((s, p) => s + mockTokens(p) + (body.suffix ? mockTokens(body.suffix) : 0), 0),
    completion_tokens: answers.reduce((s, a) => s + a.pieces.length * generated, 0),
    total_tokens: 0,
  };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  const withLogprobs = typeof body.logprobs === 'number';
  const choices = answers.flatMap((a, i) =>
    Array.from({ length: n }, (_, k) => ({
      index: i * n + k,
      text: (body.echo ? prompts[i] : '') + a.pieces.join(''),
      logprobs: withLogprobs ? logprobsOf(a.pieces) : null,
      finish_reason: a.truncated ? 'length' : 'stop',
    })),
  );
  if (!stream) {
    return { kind: 'json', status: 200, body: JSON.stringify({ id, object: 'text_completion', created, model: body.model, choices, usage }) };
  }
  const withUsage = body.stream_options?.include_usage === true;
  return {
    kind: 'stream',
    status: 200,
    body: completionChunks({
      id,
      created,
      model: body.model,
      choices,
      answers,
      n,
      prompts,
      echo: body.echo === true,
      usage: withUsage ? usage : null,
      delayMs,
      signal,
    }),
  };
}

async function* completionChunks(o: {
  id: string;
  created: number;
  model: string;
  choices: Array<{ index: number; finish_reason: string }>;
  answers: Array<{ pieces: string[] }>;
  n: number;
  prompts: string[];
  echo: boolean;
  usage: object | null;
  delayMs: number;
  signal: AbortSignal;
}): AsyncGenerator<string> {
  const frame = (choices: object[], usage?: object): string =>
    `data: ${JSON.stringify({ id: o.id, object: 'text_completion', created: o.created, model: o.model, choices, ...(usage ? { usage } : {}) })}\n\n`;
  const longest = Math.max(...o.answers.map((a) => a.pieces.length));
  for (let step = -1; step <= longest; step++) {
    if (step >= 0 && o.delayMs > 0) await sleep(o.delayMs, undefined, { signal: o.signal });
    const out: object[] = [];
    for (const c of o.choices) {
      const a = o.answers[Math.floor(c.index / o.n)] as { pieces: string[] };
      if (step === -1) {
        if (o.echo) out.push({ index: c.index, text: o.prompts[Math.floor(c.index / o.n)], logprobs: null, finish_reason: null });
      } else if (step < a.pieces.length) out.push({ index: c.index, text: a.pieces[step], logprobs: null, finish_reason: null });
      else if (step === a.pieces.length) out.push({ index: c.index, text: '', logprobs: null, finish_reason: c.finish_reason });
    }
    if (out.length > 0) yield frame(out);
  }
  if (o.usage) yield frame([], o.usage);
  yield 'data: [DONE]\n\n';
}

interface RerankBody {
  model: string;
  query: string;
  documents: unknown[];
  top_n?: number | null;
  return_documents?: boolean | null;
}

const words = (s: string): Set<string> => new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
const docText = (d: unknown): string =>
  typeof d === 'string' ? d : d && typeof d === 'object' && 'text' in d ? String((d as { text: unknown }).text) : JSON.stringify(d);

/** Scores by the share of the query's words a document holds (ties by position): Cohere v2's answer with vLLM's usage. */
export function mockRerank(body: RerankBody): UpstreamOutcome {
  const q = words(body.query);
  const scored = body.documents.map((d, index) => {
    const w = words(docText(d));
    const hits = [...q].filter((x) => w.has(x)).length;
    return {
      index,
      relevance_score: Math.round(((hits + 0.5) / (q.size + 1)) * 1e6) / 1e6,
      ...(body.return_documents ? { document: { text: docText(d) } } : {}),
    };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const results = scored.slice(0, body.top_n ?? scored.length);
  const tokens = mockTokens(body.query) * body.documents.length + body.documents.reduce<number>((s, d) => s + mockTokens(docText(d)), 0);
  const out = {
    id: `rerank-mock-${Date.now().toString(36)}`,
    model: body.model,
    results,
    usage: { total_tokens: tokens },
    meta: { api_version: { version: '2' }, billed_units: { search_units: Math.ceil(body.documents.length / 100) } },
  };
  return { kind: 'json', status: 200, body: JSON.stringify(out) };
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
] as const;
/** The categories OpenAI also judges images for (the others apply to text only). */
const IMAGE_CATEGORIES = new Set(['self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'violence', 'violence/graphic']);
/** Words that flag a text as violence in the mock (a demo, not a classifier). */
const VIOLENT = /\b(kill|attack|hurt|stab)\b/i;

interface ModerationsBody {
  model: string;
  input: unknown;
}

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** One result per input string, or one for a list of parts (text and images), as OpenAI answers. */
export function mockModerations(body: ModerationsBody): UpstreamOutcome {
  const items: Array<{ text: string; image: boolean }> = [];
  if (typeof body.input === 'string') items.push({ text: body.input, image: false });
  else if (Array.isArray(body.input) && body.input.every((x) => typeof x === 'string'))
    for (const t of body.input as string[]) items.push({ text: t, image: false });
  else if (Array.isArray(body.input)) {
    const parts = body.input as Part[];
    items.push({ text: parts.map((p) => (p.type === 'text' ? p.text : '')).join(' '), image: parts.some((p) => p.type === 'image_url') });
  }
  const results = items.map(({ text, image }) => {
    const violent = VIOLENT.test(text);
    const categories = Object.fromEntries(CATEGORIES.map((c) => [c, c === 'violence' && violent]));
    const category_scores = Object.fromEntries(CATEGORIES.map((c) => [c, c === 'violence' && violent ? 0.91 : 0.0001]));
    const applied = Object.fromEntries(CATEGORIES.map((c) => [c, ['text', ...(image && IMAGE_CATEGORIES.has(c) ? ['image'] : [])]]));
    return { flagged: violent, categories, category_scores, category_applied_input_types: applied };
  });
  return { kind: 'json', status: 200, body: JSON.stringify({ id: `modr-mock-${Date.now().toString(36)}`, model: body.model, results }) };
}
