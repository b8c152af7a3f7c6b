// An upstream's answer relayed to the client: a JSON body or an SSE stream passed on event by event (ids, retry
// hints and comments kept, so Last-Event-ID resumes against the upstream), with hooks that may rewrite the response
// to the client's request (tools/list filtered) or the server's own messages (ids of its requests on /mcp), and
// one `done` with the response once the answer is over, however it ended (a tools/call is settled there).
import type { McpAnswer } from './answer.ts';
import { RPC, rpcError, type JsonRpcId } from './jsonrpc.ts';
import { readText, type UpstreamAnswer } from './upstream.ts';

export type Message = Record<string, unknown>;

export interface RelayHooks {
  /** The response to the client's request: the message the client gets instead. */
  response?(msg: Message): Message;
  /** A request or notification of the server's on the stream: the message the client gets instead. */
  other?(msg: Message): Message;
  /** Once, when the answer is over: the response the client got, or null (none came, the upstream failed). */
  done?(response: Message | null): Promise<void>;
}

/** A JSON answer larger than this is refused (16 MiB): the gateway holds it whole to filter it. */
export const MAX_JSON_ANSWER = 16 * 1024 * 1024;

const isObject = (v: unknown): v is Message => typeof v === 'object' && v !== null && !Array.isArray(v);

function isResponseTo(m: Message, id: JsonRpcId | null): boolean {
  return id !== null && m.method === undefined && m.id === id && (m.result !== undefined || m.error !== undefined);
}

function rewrite(m: Message, id: JsonRpcId | null, hooks: RelayHooks): { msg: Message; final: boolean } {
  if (isResponseTo(m, id)) return { msg: hooks.response ? hooks.response(m) : m, final: true };
  return { msg: hooks.other && typeof m.method === 'string' ? hooks.other(m) : m, final: false };
}

export async function relay(up: UpstreamAnswer, id: JsonRpcId | null, server: string, hooks: RelayHooks, sessionId?: string): Promise<McpAnswer> {
  const sid = sessionId ? { sessionId } : {};
  if (up.status === 202) {
    up.body.resume();
    await hooks.done?.(null);
    return { kind: 'accepted', ...sid };
  }
  if (up.status >= 200 && up.status < 300 && up.contentType.includes('text/event-stream')) {
    return { kind: 'stream', events: events(up, id, server, hooks), ...sid };
  }
  if (up.status >= 200 && up.status < 300) {
    let m: unknown;
    try {
      m = JSON.parse(await readText(up.body, MAX_JSON_ANSWER));
    } catch {
      await hooks.done?.(null);
      return upstreamError(id, server, 'answered with a body that is not one JSON-RPC message');
    }
    if (!isObject(m)) {
      await hooks.done?.(null);
      return upstreamError(id, server, 'answered with a body that is not one JSON-RPC message');
    }
    const r = rewrite(m, id, hooks);
    await hooks.done?.(r.final ? r.msg : null);
    return { kind: 'json', status: 200, body: r.msg, ...sid };
  }
  // Undici emits 'error' on a body destroyed before its end: without a listener it would end the process.
  up.body.on('error', () => undefined).destroy();
  await hooks.done?.(null);
  return failed(up.status, id, server);
}

function failed(status: number, id: JsonRpcId | null, server: string): McpAnswer {
  if (status === 404) {
    return { kind: 'json', status: 404, body: rpcError(id, RPC.sessionNotFound, `The session of McpServer ${server} has ended: send initialize again.`) };
  }
  if (status === 405) return { kind: 'status', status: 405, allow: 'POST, DELETE' };
  if (status === 401 || status === 403) return upstreamError(id, server, `refused the gateway's credential (HTTP ${status})`);
  return upstreamError(id, server, `answered HTTP ${status}`);
}

export function upstreamError(id: JsonRpcId | null, server: string, what: string, status = 502): McpAnswer {
  return { kind: 'json', status, body: rpcError(id, RPC.upstream, `McpServer ${server} ${what}.`, { server }) };
}

async function* events(up: UpstreamAnswer, id: JsonRpcId | null, server: string, hooks: RelayHooks): AsyncGenerator<string> {
  let final: Message | null = null;
  let buf = '';
  const decoder = new TextDecoder();
  const block = (b: string): string => {
    const r = rewriteBlock(b, id, hooks);
    if (r.final) final = r.final;
    return `${r.text}\n\n`;
  };
  let cut = false;
  try {
    try {
      for await (const chunk of up.body) {
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        if (buf.includes('\r')) buf = buf.replace(/\r\n/g, '\n');
        let i = buf.indexOf('\n\n');
        while (i !== -1) {
          yield block(buf.slice(0, i));
          buf = buf.slice(i + 2);
          i = buf.indexOf('\n\n');
        }
      }
    } catch {
      // The upstream's stream failed or passed its totalMs: the request still gets its answer, an error.
      cut = true;
    }
    if (buf.trim() !== '' && !cut) yield block(buf);
    if (final === null && id !== null) {
      const why = cut ? 'stopped answering (its stream failed or timed out)' : 'ended its stream without answering';
      yield `data: ${JSON.stringify(rpcError(id, RPC.upstream, `McpServer ${server} ${why}.`, { server }))}\n\n`;
    }
  } finally {
    up.body.destroy();
    await hooks.done?.(final);
  }
}

/** One SSE event: its data rewritten by the hooks when it is a JSON-RPC message; its other fields as they were. */
function rewriteBlock(b: string, id: JsonRpcId | null, hooks: RelayHooks): { text: string; final: Message | null } {
  const lines = b.split('\n');
  const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
  if (data.length === 0) return { text: b, final: null };
  let m: unknown;
  try {
    m = JSON.parse(data.join('\n'));
  } catch {
    return { text: b, final: null };
  }
  if (!isObject(m)) return { text: b, final: null };
  const r = rewrite(m, id, hooks);
  const kept = lines.filter((l) => !l.startsWith('data:'));
  return { text: [...kept, `data: ${JSON.stringify(r.msg)}`].join('\n'), final: r.final ? r.msg : null };
}
