// Where a body's text is, in every dialect: the caller's prompt (messages, system, instructions, input, prompt,
// tool arguments and tool results) and the answer (message content, tool call arguments, output items). Walked
// generically under each endpoint's text roots, skipping what is structure or must not change: ids, roles, types,
// model names, tool definitions, URLs and base64 sources of images and files, and thinking blocks with their
// signatures (an Anthropic upstream refuses a thinking block whose text was changed).
import type { Endpoint } from '../usage/event.ts';

export interface TextPlace {
  /** Where the text is, for the usage facts ("messages[2].content"); never the text. */
  path: string;
  get(): string;
  set(text: string): void;
}

const REQUEST_ROOTS: Partial<Record<Endpoint, readonly string[]>> = {
  'chat.completions': ['messages'],
  messages: ['system', 'messages'],
  responses: ['instructions', 'input'],
  completions: ['prompt', 'suffix'],
  embeddings: ['input'],
};

const ANSWER_ROOTS: Partial<Record<Endpoint, readonly string[]>> = {
  'chat.completions': ['choices'],
  messages: ['content'],
  responses: ['output'],
  completions: ['choices'],
};

/** Keys whose values are structure, identifiers or binary: never read, never changed. */
const SKIP = new Set([
  'role',
  'type',
  'id',
  'model',
  'name',
  'tool_call_id',
  'tool_use_id',
  'call_id',
  'index',
  'logprobs',
  'finish_reason',
  'stop_reason',
  'status',
  'url',
  'image_url',
  'file_id',
  'file_data',
  'source',
  'media_type',
  'data',
  'signature',
  'encrypted_content',
  'cache_control',
  'annotations',
  'citations',
  'usage',
]);

/** Blocks whose text must stay as the upstream signed it. */
const SKIP_TYPES = new Set(['thinking', 'redacted_thinking', 'reasoning']);

export function requestPlaces(endpoint: Endpoint, body: Record<string, unknown>): TextPlace[] {
  return places(body, REQUEST_ROOTS[endpoint] ?? []);
}

export function answerPlaces(endpoint: Endpoint, body: Record<string, unknown>): TextPlace[] {
  return places(body, ANSWER_ROOTS[endpoint] ?? []);
}

function places(body: Record<string, unknown>, roots: readonly string[]): TextPlace[] {
  const out: TextPlace[] = [];
  for (const root of roots) walk(body, root, root, out);
  return out;
}

function walk(holder: Record<string, unknown> | unknown[], key: string | number, path: string, out: TextPlace[]): void {
  const value = (holder as Record<string | number, unknown>)[key];
  if (typeof value === 'string') {
    if (value.length === 0) return;
    out.push({
      path,
      get: () => (holder as Record<string | number, unknown>)[key] as string,
      set: (t) => {
        (holder as Record<string | number, unknown>)[key] = t;
      },
    });
    return;
  }
  if (Array.isArray(value)) {
    // Token arrays (embeddings and completions take them) hold no text.
    value.forEach((_, i) => walk(value, i, `${path}[${i}]`, out));
    return;
  }
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    if (typeof obj.type === 'string' && SKIP_TYPES.has(obj.type)) return;
    for (const k of Object.keys(obj)) if (!SKIP.has(k)) walk(obj, k, `${path}.${k}`, out);
  }
}
