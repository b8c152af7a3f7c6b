// The OpenAI fake's Responses API (POST /v1/responses), for targets with responsesApi: the same scripted
// behaviours as its chat answers (text, tool calls, usage, cut mid-stream), in the Responses wire format.
import type { ServerResponse } from 'node:http';
import type { Behavior, FakeToolCall, FakeUpstream, RecordedCall } from './upstream.ts';

const REPLY = 'Hello from the fake Responses upstream.';

interface Reply {
  text: string;
  calls: FakeToolCall[];
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
}

function output(r: Reply): object[] {
  const items: object[] = [];
  if (r.text !== '' || r.calls.length === 0) {
    items.push({ id: 'msg_fake', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: r.text, annotations: [] }] });
  }
  r.calls.forEach((c, i) =>
    items.push({ id: `fc_fake_${i}`, type: 'function_call', status: 'completed', call_id: c.id ?? `call_fake_${i}`, name: c.name, arguments: c.arguments }),
  );
  return items;
}

function response(call: RecordedCall, status: string, out: object[], usage: Reply['usage'] | null): object {
  return {
    id: 'resp_fake',
    object: 'response',
    created_at: 1_700_000_000,
    status,
    model: String(call.body.model ?? 'unknown'),
    output: out,
    usage: usage && {
      input_tokens: usage.prompt_tokens,
      input_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
      output_tokens: usage.completion_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
    },
  };
}

/** The events of a streamed answer, as OpenAI sends them (text deltas word by word, arguments in one delta). */
function events(call: RecordedCall, r: Reply): Array<[string, object]> {
  const list: Array<[string, object]> = [];
  const created = response(call, 'in_progress', [], null);
  list.push(['response.created', { response: created }], ['response.in_progress', { response: created }]);
  output(r).forEach((item, index) => {
    const it = item as { id: string; type: string; content?: Array<{ text: string }>; arguments?: string };
    if (it.type === 'message') {
      list.push(['response.output_item.added', { output_index: index, item: { ...it, status: 'in_progress', content: [] } }]);
      list.push([
        'response.content_part.added',
        { item_id: it.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
      ]);
      for (const piece of r.text.split(/(?<= )/).filter((p) => p !== '')) {
        list.push(['response.output_text.delta', { item_id: it.id, output_index: index, content_index: 0, delta: piece }]);
      }
      list.push(['response.output_text.done', { item_id: it.id, output_index: index, content_index: 0, text: r.text }]);
      list.push(['response.content_part.done', { item_id: it.id, output_index: index, content_index: 0, part: it.content?.[0] }]);
    } else {
      list.push(['response.output_item.added', { output_index: index, item: { ...it, status: 'in_progress', arguments: '' } }]);
      list.push(['response.function_call_arguments.delta', { item_id: it.id, output_index: index, delta: it.arguments }]);
      list.push(['response.function_call_arguments.done', { item_id: it.id, output_index: index, arguments: it.arguments }]);
    }
    list.push(['response.output_item.done', { output_index: index, item }]);
  });
  list.push(['response.completed', { response: response(call, 'completed', output(r), r.usage) }]);
  return list;
}

export function answerResponses(fake: FakeUpstream, call: RecordedCall, b: Behavior, res: ServerResponse): void {
  const reply = b.kind === 'reply' ? b : { kind: 'reply' as const };
  const calls = reply.toolCalls ?? [];
  const r: Reply = { text: reply.content ?? (calls.length > 0 ? '' : REPLY), calls, usage: reply.usage ?? { prompt_tokens: 11, completion_tokens: 7 } };
  if (call.body.stream !== true) {
    fake.served.prompt += r.usage.prompt_tokens;
    fake.served.completion += r.usage.completion_tokens;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response(call, 'completed', output(r), r.usage)));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const list = events(call, r);
  const cutAt = b.kind === 'cut' ? b.afterChunks : list.length;
  for (let i = 0; i < Math.min(cutAt, list.length); i++) {
    const [type, data] = list[i] as [string, object];
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: i, ...data })}\n\n`);
  }
  if (cutAt < list.length) {
    setTimeout(() => res.socket?.destroy(), 30);
    return;
  }
  fake.served.prompt += r.usage.prompt_tokens;
  fake.served.completion += r.usage.completion_tokens;
  res.end();
}
