// Which request texts are tools' results (documents, in Prompt Shields' terms): a chat message of role tool (or
// function), an Anthropic tool_result block, a Responses function_call_output (or another *_output item).
import type { Endpoint } from '../../usage/event.ts';

type Obj = Record<string, unknown>;

const at = (list: unknown, i: string | undefined): Obj | undefined =>
  Array.isArray(list) && i !== undefined ? ((list as unknown[])[Number(i)] as Obj | undefined) : undefined;

export function isDocument(endpoint: Endpoint, body: Obj, path: string): boolean {
  if (endpoint === 'chat.completions') {
    const m = at(body.messages, /^messages\[(\d+)\]/.exec(path)?.[1]);
    return m?.role === 'tool' || m?.role === 'function';
  }
  if (endpoint === 'messages') {
    const r = /^messages\[(\d+)\]\.content\[(\d+)\]/.exec(path);
    const block = r ? at(at(body.messages, r[1])?.content, r[2]) : undefined;
    return block?.type === 'tool_result';
  }
  if (endpoint === 'responses') {
    const item = at(body.input, /^input\[(\d+)\]/.exec(path)?.[1]);
    return typeof item?.type === 'string' && item.type.endsWith('_output');
  }
  return false;
}
