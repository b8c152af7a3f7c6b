// Prompts and completions as the GenAI semantic conventions record them on a span, for a ModelRoute that opts in
// (spec.tracing.captureContent): gen_ai.input.messages, gen_ai.system_instructions and gen_ai.output.messages,
// JSON strings following the conventions' message schemas ({role, parts: [{type: "text", content}, {type:
// "tool_call", id, name, arguments}, {type: "tool_call_response", id, response}]}, output messages with their
// finish_reason). Every text goes through the redactor first; each attribute is bounded (MAX_CONTENT characters
// of text across its parts: past it parts are cut and `truncated` says so). Images and files are recorded as their
// type only. Read from the client's own request and answer, in its dialect.
import type { Dialect } from '../errors/catalog.ts';
import { SseParser } from '../sse/parser.ts';
import type { Endpoint } from '../usage/event.ts';
import { redact } from './redact.ts';

/** Characters of text per attribute, at most (after redaction). */
export const MAX_CONTENT = 16_384;

type Json = Record<string, unknown>;
type Part = Json;
interface Message {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

/** Spends a budget of text characters; texts past it are cut. */
class Budget {
  left = MAX_CONTENT;
  truncated = false;
  text(s: string): string {
    const clean = redact(s);
    if (clean.length <= this.left) {
      this.left -= clean.length;
      return clean;
    }
    this.truncated = true;
    const cut = clean.slice(0, Math.max(0, this.left));
    this.left = 0;
    return cut;
  }
}

const text = (b: Budget, s: unknown): Part => ({ type: 'text', content: b.text(str(s)) });
const call = (b: Budget, id: unknown, name: unknown, args: unknown): Part => ({
  type: 'tool_call',
  id: typeof id === 'string' ? id : null,
  name: str(name),
  arguments: b.text(str(args)),
});
const response = (b: Budget, id: unknown, r: unknown): Part => ({
  type: 'tool_call_response',
  id: typeof id === 'string' ? id : null,
  response: b.text(str(r)),
});

/** Parts of an OpenAI / Anthropic / Responses content field (a string, or blocks). */
function parts(b: Budget, content: unknown): Part[] {
  if (typeof content === 'string') return [text(b, content)];
  if (!Array.isArray(content)) return [];
  const out: Part[] = [];
  for (const p of content) {
    if (!isObj(p)) continue;
    if (typeof p.text === 'string') out.push(text(b, p.text));
    else if (p.type === 'tool_use') out.push(call(b, p.id, p.name, p.input));
    else if (p.type === 'tool_result')
      out.push(
        response(
          b,
          p.tool_use_id,
          Array.isArray(p.content)
            ? parts(b, p.content)
                .map((x) => x.content ?? '')
                .join('')
            : p.content,
        ),
      );
    else if (p.type === 'refusal') out.push(text(b, p.refusal));
    else if (typeof p.type === 'string') out.push({ type: p.type });
  }
  return out;
}

function chatMessage(b: Budget, m: Json): Message {
  const role = str(m.role);
  if (role === 'tool')
    return {
      role,
      parts: [
        response(
          b,
          m.tool_call_id,
          typeof m.content === 'string'
            ? m.content
            : parts(b, m.content)
                .map((x) => x.content ?? '')
                .join(''),
        ),
      ],
    };
  const out = parts(b, m.content);
  if (Array.isArray(m.tool_calls)) {
    for (const c of m.tool_calls)
      if (isObj(c)) out.push(call(b, c.id, isObj(c.function) ? c.function.name : '', isObj(c.function) ? c.function.arguments : ''));
  }
  return { role, parts: out };
}

function responsesItems(b: Budget, input: unknown): Message[] {
  if (typeof input === 'string') return [{ role: 'user', parts: [text(b, input)] }];
  if (!Array.isArray(input)) return [];
  const out: Message[] = [];
  for (const it of input) {
    if (!isObj(it)) continue;
    if (it.type === 'function_call') out.push({ role: 'assistant', parts: [call(b, it.call_id, it.name, it.arguments)] });
    else if (it.type === 'function_call_output') out.push({ role: 'tool', parts: [response(b, it.call_id, it.output)] });
    else if (typeof it.role === 'string') out.push({ role: it.role, parts: parts(b, it.content) });
  }
  return out;
}

export interface CapturedInput {
  messages: string;
  /** Instructions given apart from the messages (Anthropic's system, the Responses API's instructions). */
  system: string | null;
  truncated: boolean;
}

/** The request's prompt, or null for an endpoint with none (embeddings, count_tokens). */
export function inputContent(dialect: Dialect, endpoint: Endpoint, body: unknown): CapturedInput | null {
  if (!isObj(body)) return null;
  const b = new Budget();
  let messages: Message[];
  let system: Part[] | null = null;
  if (endpoint === 'chat.completions') {
    messages = (Array.isArray(body.messages) ? body.messages : []).filter(isObj).map((m) => chatMessage(b, m));
  } else if (endpoint === 'messages' && dialect === 'anthropic') {
    if (body.system !== undefined) system = parts(b, body.system);
    messages = (Array.isArray(body.messages) ? body.messages : []).filter(isObj).map((m) => ({ role: str(m.role), parts: parts(b, m.content) }));
  } else if (endpoint === 'responses') {
    if (typeof body.instructions === 'string') system = [text(b, body.instructions)];
    messages = responsesItems(b, body.input);
  } else return null;
  return { messages: JSON.stringify(messages), system: system ? JSON.stringify(system) : null, truncated: b.truncated };
}

/** Output messages of a whole answer (the client's body), one per choice. */
function outputOfBody(b: Budget, endpoint: Endpoint, body: Json): Message[] {
  if (endpoint === 'chat.completions') {
    return (Array.isArray(body.choices) ? body.choices : []).filter(isObj).map((c) => ({
      ...chatMessage(b, isObj(c.message) ? { ...c.message, role: 'assistant' } : { role: 'assistant' }),
      finish_reason: str(c.finish_reason),
    }));
  }
  if (endpoint === 'messages') return [{ role: 'assistant', parts: parts(b, body.content), finish_reason: str(body.stop_reason) }];
  if (endpoint === 'responses') {
    const out: Part[] = [];
    for (const it of Array.isArray(body.output) ? body.output : []) {
      if (!isObj(it)) continue;
      if (it.type === 'function_call') out.push(call(b, it.call_id, it.name, it.arguments));
      else if (it.type === 'message') out.push(...parts(b, it.content));
    }
    const details = isObj(body.incomplete_details) ? str(body.incomplete_details.reason) : '';
    return [{ role: 'assistant', parts: out, finish_reason: details || str(body.status) }];
  }
  return [];
}

/** A streamed answer's text and tool calls, gathered from the events the client got. */
function outputOfStream(b: Budget, endpoint: Endpoint, sse: string): Message[] {
  const events = new SseParser().push(sse);
  if (endpoint === 'responses') {
    for (let i = events.length - 1; i >= 0; i--) {
      const d = parse(events[i]?.data);
      if (isObj(d) && isObj(d.response) && /^response\.(completed|incomplete|failed)$/.test(str(d.type))) return outputOfBody(b, endpoint, d.response);
    }
    return [];
  }
  let textOut = '';
  const calls = new Map<number, { id: unknown; name: string; args: string }>();
  let finish = '';
  for (const ev of events) {
    const d = parse(ev.data);
    if (!isObj(d)) continue;
    if (endpoint === 'chat.completions') {
      const c = Array.isArray(d.choices) && isObj(d.choices[0]) ? d.choices[0] : null;
      const delta = c && isObj(c.delta) ? c.delta : {};
      if (typeof delta.content === 'string') textOut += delta.content;
      for (const t of Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isObj) : []) {
        const fn = isObj(t.function) ? t.function : {};
        const k = typeof t.index === 'number' ? t.index : 0;
        const had = calls.get(k) ?? { id: t.id, name: '', args: '' };
        had.name += typeof fn.name === 'string' ? fn.name : '';
        had.args += typeof fn.arguments === 'string' ? fn.arguments : '';
        calls.set(k, had);
      }
      if (c && typeof c.finish_reason === 'string') finish = c.finish_reason;
    } else {
      const delta = isObj(d.delta) ? d.delta : {};
      const k = typeof d.index === 'number' ? d.index : 0;
      if (d.type === 'content_block_start' && isObj(d.content_block) && d.content_block.type === 'tool_use') {
        calls.set(k, { id: d.content_block.id, name: str(d.content_block.name), args: '' });
      }
      if (delta.type === 'text_delta' && typeof delta.text === 'string') textOut += delta.text;
      if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
        const had = calls.get(k);
        if (had) had.args += delta.partial_json;
      }
      if (d.type === 'message_delta' && typeof delta.stop_reason === 'string') finish = delta.stop_reason;
    }
  }
  const out: Part[] = textOut !== '' || calls.size === 0 ? [text(b, textOut)] : [];
  for (const c of calls.values()) out.push(call(b, c.id, c.name, c.args));
  return [{ role: 'assistant', parts: out, finish_reason: finish }];
}

function parse(data: string | undefined): unknown {
  if (!data || data === '[DONE]') return undefined;
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return undefined;
  }
}

/** gen_ai.output.messages of the answer the client got: a JSON body, or the stream's SSE text (`stream`). */
export function outputContent(endpoint: Endpoint, answer: string, stream: boolean): { messages: string; truncated: boolean } | null {
  const b = new Budget();
  let messages: Message[];
  if (stream) messages = outputOfStream(b, endpoint, answer);
  else {
    const body = parse(answer);
    if (!isObj(body)) return null;
    messages = outputOfBody(b, endpoint, body);
  }
  return messages.length > 0 ? { messages: JSON.stringify(messages), truncated: b.truncated } : null;
}
