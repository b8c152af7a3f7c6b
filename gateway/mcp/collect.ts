// The response to one request, read whole from an upstream's answer (JSON, or an SSE stream up to that response):
// what /mcp needs from each server when it answers for all of them (initialize, tools/list).
import type { JsonRpcId } from './jsonrpc.ts';
import { MAX_JSON_ANSWER, relay, type Message } from './relay.ts';
import type { UpstreamAnswer } from './upstream.ts';

export async function collect(up: UpstreamAnswer, id: JsonRpcId, server: string): Promise<Message | null> {
  let response: Message | null = null;
  const answer = await relay(up, id, server, {
    // Seen as soon as its event comes (a stream need not end for it), and again once the answer is over.
    response: (m) => (response = m),
    done: async (m) => {
      response ??= m;
    },
  });
  if (answer.kind !== 'stream') return response;
  let bytes = 0;
  for await (const event of answer.events) {
    bytes += event.length;
    // Server-to-client messages sent before the response are not the client's here (no request of its own asked).
    if (response !== null || bytes > MAX_JSON_ANSWER) break;
  }
  return response;
}
