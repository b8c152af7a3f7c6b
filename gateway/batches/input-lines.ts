// A batch input file (JSONL) read and checked line by line before it is kept: each line a JSON object with a unique
// custom_id, method POST, a url the Batch API takes, and a body the endpoint itself would accept (the same schemas as
// the per-call routes). As OpenAI's Batch API: one endpoint and one model per file, at most 50,000 lines, no streams.
import type { z } from 'zod';
import { GatewayError } from '../errors/catalog.ts';
import { chatBody, embeddingsBody } from '../http/openai-schemas.ts';
import { responsesBody } from '../http/responses-schemas.ts';
import { parseBody } from '../http/validate.ts';
import { choicesOf, type Demand } from '../pipeline/estimate.ts';
import { nonTextTokens, toolsTokens } from '../pipeline/non-text.ts';
import { BATCH_URLS, type BatchUrl } from './types.ts';

export const MAX_LINES = 50_000;
const CUSTOM_ID_MAX = 512;

export interface InputLine {
  customId: string;
  url: BatchUrl;
  body: Record<string, unknown>;
  /** What the line alone says about its size (pipeline/estimate.ts), for its hold. */
  demand: Demand;
}

export interface InputFile {
  url: BatchUrl;
  model: string;
  lines: InputLine[];
}

function bad(line: number, message: string): GatewayError {
  return new GatewayError('invalid_request', `Invalid batch file, line ${line}: ${message}`, { param: 'file' });
}

/** The lines of a batch input file, or a 400 naming the first bad line (1-based). */
export function readInputFile(text: string): InputFile {
  const lines: InputLine[] = [];
  const ids = new Set<string>();
  let first: { url: BatchUrl; model: string } | null = null;
  const rows = text.split('\n');
  for (let i = 0; i < rows.length; i++) {
    const raw = rows[i]?.replace(/\r$/, '') ?? '';
    if (raw.trim() === '') continue;
    const n = i + 1;
    if (lines.length >= MAX_LINES) throw bad(n, `a batch file has at most ${MAX_LINES} requests.`);
    const line = readLine(raw, n);
    if (ids.has(line.customId)) throw bad(n, `custom_id ${JSON.stringify(line.customId)} is used by an earlier line; each must be unique.`);
    ids.add(line.customId);
    const model = line.body.model as string;
    if (first && line.url !== first.url) throw bad(n, `every line of a file calls one endpoint (${first.url}), this one ${line.url}.`);
    if (first && model !== first.model) throw bad(n, `every line of a file uses one model (${first.model}), this one ${model}.`);
    first ??= { url: line.url, model };
    lines.push(line);
  }
  if (!first) throw new GatewayError('invalid_request', 'Invalid batch file: it has no requests (one JSON object per line).', { param: 'file' });
  return { ...first, lines };
}

function readLine(raw: string, n: number): InputLine {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw bad(n, 'not valid JSON (each line is one JSON object).');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(n, 'not a JSON object.');
  const o = v as Record<string, unknown>;
  if (typeof o.custom_id !== 'string' || o.custom_id === '' || o.custom_id.length > CUSTOM_ID_MAX)
    throw bad(n, `custom_id must be a string of 1 to ${CUSTOM_ID_MAX} characters.`);
  if (o.method !== 'POST') throw bad(n, 'method must be "POST".');
  if (!BATCH_URLS.includes(o.url as BatchUrl)) throw bad(n, `url must be one of ${BATCH_URLS.join(', ')}.`);
  const url = o.url as BatchUrl;
  if (typeof o.body !== 'object' || o.body === null || Array.isArray(o.body)) throw bad(n, 'body must be a JSON object.');
  const body = o.body as Record<string, unknown>;
  if (body.stream === true) throw bad(n, 'a batch request cannot stream (body.stream must not be true).');
  let demand: Demand;
  try {
    demand = demandOf(url, body, Buffer.byteLength(raw));
  } catch (err) {
    if (err instanceof GatewayError) throw bad(n, `body: ${err.message.replace(/^Invalid request: /, '')}`);
    throw err;
  }
  return { customId: o.custom_id, url, body, demand };
}

function checked<T>(schema: z.ZodType<T>, body: unknown): T {
  return parseBody(schema, body);
}

/** The line's demand as the per-call route computes it (its bytes bound its prompt's tokens). */
function demandOf(url: BatchUrl, body: unknown, inputBytes: number): Demand {
  switch (url) {
    case '/v1/chat/completions': {
      const b = checked(chatBody, body);
      return {
        inputBytes,
        extraInputTokens: nonTextTokens(b.messages) + toolsTokens(b.tools),
        maxTokens: b.max_completion_tokens ?? b.max_tokens ?? undefined,
        choices: choicesOf(b.n),
      };
    }
    case '/v1/embeddings':
      checked(embeddingsBody, body);
      return { inputBytes, extraInputTokens: 0, maxTokens: 0, choices: 1 };
    case '/v1/responses': {
      const b = checked(responsesBody, body);
      return { inputBytes, extraInputTokens: nonTextTokens(b.input) + toolsTokens(b.tools), maxTokens: b.max_output_tokens ?? undefined, choices: 1 };
    }
    default: {
      const never: never = url;
      throw new Error(`unknown batch url ${String(never)}`);
    }
  }
}
