// Golden tests of the Responses pass-through (an openai target with responsesApi) on wire samples (testdata/).
import { afterAll, describe, expect, it } from 'vitest';
import { responsesFromOpenAI } from './responses-openai.ts';
import { answered, clientEvents, expectGolden, loadGolden, MODEL, streamed, TARGET, UPDATE, wire } from '../testdata/golden.ts';

const golden = loadGolden('responses-passthrough');
const RESPONSES = { ...TARGET, responsesApi: true };
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('responses pass-through: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const frozen = structuredClone(c.client);
    expectGolden(c, wire(responsesFromOpenAI(c.client).request(RESPONSES, MODEL)));
    expect(c.client).toEqual(frozen);
  });

  it('follows the target: translated for a target without responsesApi, passed through for one with it', () => {
    const t = responsesFromOpenAI({ model: 'm', input: 'hi' });
    expect(t.request(TARGET, MODEL).operation).toBe('chat');
    expect(t.request(RESPONSES, MODEL).operation).toBe('responses');
    const body = JSON.stringify({ id: 'resp_1', object: 'response', model: 'up', output: [], usage: { input_tokens: 2, output_tokens: 1 } });
    expect(JSON.parse(t.response(body, 'public').body)).toMatchObject({ object: 'response', model: 'public' });
  });
});

describe('responses pass-through: answers', () => {
  it.each(golden.data.response)('$name', (c) => {
    const t = responsesFromOpenAI({});
    t.request(RESPONSES, MODEL);
    expectGolden(c, answered(t, c.upstream));
  });
});

describe('responses pass-through: streams', () => {
  it.each(golden.data.stream)('$name', (c) => {
    const t = responsesFromOpenAI({ stream: true });
    t.request(RESPONSES, MODEL);
    expectGolden(c, streamed(t.stream('public-model'), c.upstream));
  });

  it('ends a cut stream with response.failed (the upstream response id) and an error event', () => {
    const t = responsesFromOpenAI({ stream: true });
    t.request(RESPONSES, MODEL);
    const tr = t.stream('m');
    tr.event({
      event: 'response.created',
      data: '{"type":"response.created","sequence_number":0,"response":{"id":"resp_up","created_at":5,"model":"x","output":[]}}',
    });
    const events = clientEvents(tr.error('cut'));
    expect(events.map((e) => e.event)).toEqual(['response.failed', 'error']);
    expect(events[0]?.data).toMatchObject({ sequence_number: 1, response: { id: 'resp_up', model: 'm', status: 'failed', created_at: 5 } });
  });
});
