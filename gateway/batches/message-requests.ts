// The `requests` of an Anthropic Message Batch read and checked before anything is held: each `{custom_id, params}`
// with a custom_id Anthropic takes (1 to 64 of letters, digits, `_` and `-`, unique in the batch) and params the
// Messages endpoint itself would accept (the same schema as /anthropic/v1/messages), not streamed. Kept as the
// lines of a batch input file (`{custom_id, method, url: "/v1/messages", body}`) so the job runs them like every other batch.
import { GatewayError } from '../errors/catalog.ts';
import { messagesBody } from '../http/anthropic-schemas.ts';
import { parseBody } from '../http/validate.ts';
import type { Demand } from '../pipeline/estimate.ts';
import { nonTextTokens, toolsTokens } from '../pipeline/non-text.ts';

/** Anthropic's bound on one Message Batch. */
export const MAX_MESSAGE_REQUESTS = 100_000;
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

export interface MessageRequest {
  customId: string;
  params: Record<string, unknown>;
  demand: Demand;
}

export interface MessageRequests {
  /** The one model of the batch's requests. */
  model: string;
  requests: MessageRequest[];
}

function bad(i: number, message: string): GatewayError {
  return new GatewayError('invalid_request', `requests.${i}: ${message}`, { param: `requests.${i}` });
}

/** The batch's requests, or a 400 naming the first bad one (0-based, as the request's own array). */
export function readMessageRequests(body: unknown): MessageRequests {
  const o = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  if (!o) throw new GatewayError('invalid_request', 'The request body must be a JSON object with `requests`.');
  const list = o.requests;
  if (!Array.isArray(list) || list.length === 0)
    throw new GatewayError('invalid_request', 'requests: a list of 1 or more requests is required.', { param: 'requests' });
  if (list.length > MAX_MESSAGE_REQUESTS)
    throw new GatewayError('invalid_request', `requests: a Message Batch has at most ${MAX_MESSAGE_REQUESTS} requests (got ${list.length}).`, {
      param: 'requests',
    });
  const ids = new Set<string>();
  const requests: MessageRequest[] = [];
  let model: string | null = null;
  for (let i = 0; i < list.length; i++) {
    const r = readRequest(list[i], i);
    if (ids.has(r.customId)) throw bad(i, `custom_id ${JSON.stringify(r.customId)} is used by an earlier request; each must be unique.`);
    ids.add(r.customId);
    const m = r.params.model as string;
    if (model !== null && m !== model)
      throw bad(i, `every request of a batch on this gateway uses one model (${model}), this one ${m}; send one batch per model.`);
    model = m;
    requests.push(r);
  }
  return { model: model as string, requests };
}

function readRequest(v: unknown, i: number): MessageRequest {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(i, 'each request is an object with custom_id and params.');
  const r = v as Record<string, unknown>;
  if (typeof r.custom_id !== 'string' || !CUSTOM_ID.test(r.custom_id))
    throw bad(i, 'custom_id must be 1 to 64 characters of letters, digits, underscores and hyphens.');
  if (typeof r.params !== 'object' || r.params === null || Array.isArray(r.params)) throw bad(i, 'params must be a Messages request object.');
  const raw = r.params as Record<string, unknown>;
  if (raw.stream === true) throw bad(i, 'params.stream: a batch request cannot stream.');
  let params: ReturnType<typeof parseMessages>;
  try {
    params = parseMessages(raw);
  } catch (err) {
    if (err instanceof GatewayError) throw bad(i, `params.${err.message}`);
    throw err;
  }
  const demand: Demand = {
    // The params' bytes bound their prompt's tokens, as the request's bytes do for one call.
    inputBytes: Buffer.byteLength(JSON.stringify(raw)),
    extraInputTokens: nonTextTokens(params.messages, params.system) + toolsTokens(params.tools),
    maxTokens: params.max_tokens,
    choices: 1,
  };
  return { customId: r.custom_id, params: raw, demand };
}

function parseMessages(raw: Record<string, unknown>): ReturnType<typeof messagesBody.parse> {
  return parseBody(messagesBody, raw, 'anthropic');
}

/** The requests as batch input lines (what the job and every batch upstream read). */
export function messageLines(requests: readonly MessageRequest[]): string {
  return requests
    .map((r) => JSON.stringify({ custom_id: r.customId, method: 'POST', url: '/v1/messages', body: r.params }))
    .join('\n')
    .concat('\n');
}
