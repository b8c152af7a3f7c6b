import { describe, expect, it } from 'vitest';
import type { CallSink } from '../pipeline/sink.ts';
import { StoredAnswerSink } from './answer-sink.ts';

function recorder(): { sink: CallSink; out: string[] } {
  const out: string[] = [];
  const sink: CallSink = {
    headers: () => {},
    json: (_s, _h, body) => out.push(body),
    stream: () => ({ write: (t) => (out.push(t), null), end: (t) => (t === undefined ? undefined : void out.push(t)), destroyed: false }),
  };
  return { sink, out };
}

const facts = { id: 'resp_svcX', store: true, previousId: 'resp_prev' };

describe('StoredAnswerSink', () => {
  it('stamps a JSON answer and hands the final response over', () => {
    const { sink, out } = recorder();
    const got: unknown[] = [];
    new StoredAnswerSink(sink, facts, (r) => got.push(r)).json(200, {}, JSON.stringify({ id: 'resp_up', status: 'completed', store: false }));
    expect(JSON.parse(out[0] as string)).toEqual({ id: 'resp_svcX', status: 'completed', store: true, previous_response_id: 'resp_prev' });
    expect(got).toEqual([JSON.parse(out[0] as string)]);
  });

  it('passes an error answer untouched and stores nothing', () => {
    const { sink, out } = recorder();
    const got: unknown[] = [];
    new StoredAnswerSink(sink, facts, (r) => got.push(r)).json(502, {}, '{"error":{}}');
    expect(out).toEqual(['{"error":{}}']);
    expect(got).toEqual([]);
  });

  it('stamps the lifecycle events of a stream, leaves deltas byte for byte, and hands over response.completed', () => {
    const { sink, out } = recorder();
    const got: Array<Record<string, unknown>> = [];
    const w = new StoredAnswerSink(sink, facts, (r) => got.push(r)).stream({});
    const created = `event: response.created\ndata: {"type":"response.created","response":{"id":"resp_up","status":"in_progress"}}\n\n`;
    const delta = `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"\\"response\\":{"}\n\n`;
    const done = `event: response.completed\ndata: {"type":"response.completed","response":{"id":"resp_up","status":"completed"}}\n\n`;
    void w.write(created + delta);
    expect(got).toEqual([]);
    void w.write(done);
    w.end();
    expect(out[0]).toContain('"id":"resp_svcX"');
    expect(out[0]).toContain(delta);
    expect(out[1]).toContain('"previous_response_id":"resp_prev"');
    expect(got).toEqual([{ id: 'resp_svcX', status: 'completed', store: true, previous_response_id: 'resp_prev' }]);
  });

  it('does not store a failed response', () => {
    const { sink } = recorder();
    const got: unknown[] = [];
    const w = new StoredAnswerSink(sink, facts, (r) => got.push(r)).stream({});
    void w.write(`event: response.failed\ndata: {"type":"response.failed","response":{"id":"r","status":"failed"}}\n\n`);
    expect(got).toEqual([]);
  });
});
