import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { McpAnswer } from './answer.ts';
import { relay, type Message } from './relay.ts';
import type { UpstreamAnswer } from './upstream-types.ts';

function sse(chunks: string[], fail = false): UpstreamAnswer {
  const body = Readable.from(
    (async function* () {
      for (const c of chunks) yield Buffer.from(c);
      if (fail) throw new Error('cut');
    })(),
  );
  return { status: 200, contentType: 'text/event-stream', sessionId: null, body };
}

async function text(a: McpAnswer): Promise<string> {
  if (a.kind !== 'stream') throw new Error(`not a stream: ${a.kind}`);
  let out = '';
  for await (const e of a.events) out += e;
  return out;
}

const response = { jsonrpc: '2.0', id: 7, result: { tools: [{ name: 'a' }, { name: 'b' }] } };
const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } };

describe('relay of an SSE answer', () => {
  it('passes events on as they are, ids and retry hints kept, across any chunking and CRLF', async () => {
    const whole = `id: e1\r\nretry: 100\r\ndata: ${JSON.stringify(progress)}\r\n\r\n: keep-alive\r\n\r\nid: e2\r\ndata: ${JSON.stringify(response)}\r\n\r\n`;
    for (const cut of [1, 5, 17, whole.length - 3]) {
      let done: Message | null = null;
      const a = await relay(sse([whole.slice(0, cut), whole.slice(cut)]), 7, 's', { done: async (m) => void (done = m) });
      expect(await text(a)).toBe(`id: e1\nretry: 100\ndata: ${JSON.stringify(progress)}\n\n: keep-alive\n\nid: e2\ndata: ${JSON.stringify(response)}\n\n`);
      expect(done).toEqual(response);
    }
  });

  it('rewrites the response to the request and the server’s own messages, nothing else', async () => {
    const serverRequest = { jsonrpc: '2.0', id: 1, method: 'sampling/createMessage', params: {} };
    const a = await relay(sse([`data: ${JSON.stringify(serverRequest)}\n\n`, `data: ${JSON.stringify(response)}\n\n`]), 7, 's', {
      response: (m) => ({ ...m, result: { tools: [] } }),
      other: (m) => ({ ...m, id: 'mapped' }),
    });
    const out = await text(a);
    expect(out).toContain('"id":"mapped"');
    expect(out).toContain('"result":{"tools":[]}');
  });

  it('ends a stream the upstream cut with a JSON-RPC error for the request, and reports no response', async () => {
    let done: Message | null | undefined;
    const a = await relay(sse([`data: ${JSON.stringify(progress)}\n\n`], true), 7, 'tools', { done: async (m) => void (done = m) });
    const out = await text(a);
    expect(out).toContain('"id":7');
    expect(out).toContain('McpServer tools stopped answering');
    expect(done).toBeNull();
  });
});

describe('relay of other answers', () => {
  it.each<[number, number, string]>([
    [404, 404, 'send initialize again'],
    [401, 502, "refused the gateway's credential"],
    [500, 502, 'answered HTTP 500'],
  ])('upstream %i -> %i (%s)', async (status, out, message) => {
    const a = await relay({ status, contentType: 'text/plain', sessionId: null, body: Readable.from([Buffer.from('upstream text')]) }, 1, 's', {});
    expect(a).toMatchObject({ kind: 'json', status: out });
    expect(JSON.stringify(a)).toContain(message);
    expect(JSON.stringify(a)).not.toContain('upstream text');
  });
});
