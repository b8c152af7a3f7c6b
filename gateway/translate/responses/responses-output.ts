// A translated answer as a Responses API `response` object: one `message` item (output_text, or refusal) and one
// `function_call` item per tool call, usage in the Responses fields, and the request's settings echoed as OpenAI
// does. Built from a Chat Completions answer; an Anthropic answer gets there through toCompletion.
import { isObject, type Json } from '../json-read.ts';
import { fromOpenAIUsage } from '../openai/openai-usage.ts';
import type { ToolNames } from './responses-chat-request.ts';
import { toResponsesUsage } from './responses-usage.ts';
import type { Usage } from '../types.ts';

function clean(id: unknown): string {
  return typeof id === 'string' ? id.replace(/^(chatcmpl-|msg_|resp_)/, '').replace(/[^A-Za-z0-9_-]/g, '') : '';
}

/** A Responses id (resp_…, msg_…, fc_…) derived from the upstream's id. */
export function responsesId(prefix: 'resp' | 'msg' | 'fc', upstreamId: unknown): string {
  return `${prefix}_${clean(upstreamId) || Date.now().toString(36)}`;
}

/** Chat finish_reason -> the response's status and incomplete_details. */
export function statusOf(finish: unknown): { status: 'completed' | 'incomplete'; incomplete_details: Json | null } {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export interface CallParts {
  id: string;
  callId: string;
  flat: string;
  args: string;
  status?: string;
}

/** A function_call item; a flattened namespaced name goes back to its namespace and name. */
export function functionCallItem(c: CallParts, tools: ToolNames): Json {
  const ns = tools.get(c.flat);
  const item: Json = { id: c.id, type: 'function_call', status: c.status ?? 'completed', arguments: c.args, call_id: c.callId, name: ns?.name ?? c.flat };
  if (ns) item.namespace = ns.namespace;
  return item;
}

export function messageItem(id: string, text: string, refusal: string | null, status = 'completed'): Json {
  const content = refusal !== null && text === '' ? [{ type: 'refusal', refusal }] : [{ type: 'output_text', text, annotations: [], logprobs: [] }];
  return { id, type: 'message', status, role: 'assistant', content };
}

/** The response object around `output`: what the client asked for, echoed as OpenAI answers it. */
export function responseObject(
  client: Json,
  o: { id: string; model: string; createdAt: number; status: string; output: Json[]; usage: Usage | null; incomplete: Json | null },
): Json {
  const meta = isObject(client.metadata) ? Object.fromEntries(Object.entries(client.metadata).filter(([k]) => k !== 'task_type')) : {};
  return {
    id: o.id,
    object: 'response',
    created_at: o.createdAt,
    status: o.status,
    background: false,
    error: null,
    incomplete_details: o.incomplete,
    instructions: client.instructions ?? null,
    max_output_tokens: client.max_output_tokens ?? null,
    model: o.model,
    output: o.output,
    parallel_tool_calls: client.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: isObject(client.reasoning) ? (client.reasoning.effort ?? null) : null, summary: null },
    store: false,
    temperature: client.temperature ?? null,
    text: isObject(client.text) ? client.text : { format: { type: 'text' } },
    tool_choice: client.tool_choice ?? 'auto',
    tools: Array.isArray(client.tools) ? client.tools : [],
    top_p: client.top_p ?? null,
    truncation: 'disabled',
    // Left out until known (OpenAI's description types usage as an object and user as a string, neither nullable).
    ...(o.usage ? { usage: toResponsesUsage(o.usage) } : {}),
    ...(typeof client.user === 'string' ? { user: client.user } : {}),
    metadata: meta,
  };
}

/** A Chat Completions answer -> a response object and its usage. */
export function fromCompletion(client: Json, completion: Json, tools: ToolNames, servedModel: string, createdAt: number): { response: Json; usage: Usage } {
  const choice = Array.isArray(completion.choices) && isObject(completion.choices[0]) ? completion.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const text = typeof message.content === 'string' ? message.content : '';
  const refusal = typeof message.refusal === 'string' ? message.refusal : null;
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  const output: Json[] = [];
  if (text !== '' || refusal !== null || calls.length === 0) output.push(messageItem(responsesId('msg', completion.id), text, refusal));
  for (const c of calls) {
    const fn = isObject(c.function) ? c.function : {};
    const callId = String(c.id ?? '');
    const args = typeof fn.arguments === 'string' ? fn.arguments : '{}';
    output.push(functionCallItem({ id: responsesId('fc', callId), callId, flat: String(fn.name ?? ''), args }, tools));
  }
  const usage = fromOpenAIUsage(completion.usage as Parameters<typeof fromOpenAIUsage>[0]);
  const { status, incomplete_details } = statusOf(choice.finish_reason);
  const response = responseObject(client, {
    id: responsesId('resp', completion.id),
    model: servedModel,
    createdAt,
    status,
    output,
    usage,
    incomplete: incomplete_details,
  });
  return { response, usage };
}
