// Golden tests of the Responses-client -> Anthropic-upstream translator on wire samples (testdata/).
import { afterAll, describe, expect, it } from 'vitest';
import { responsesFromAnthropic } from './responses-anthropic.ts';
import { clientEvents, loadGolden, MODEL, refusal, TARGET, UPDATE, upstreamEvents } from './testdata/golden.ts';

const golden = loadGolden('responses-anthropic');
const NOW = (): number => 1_767_225_600_000;
const ANTHROPIC = { ...TARGET, provider: 'anthropic' as const };
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('responses -> anthropic: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const frozen = structuredClone(c.client);
    const req = responsesFromAnthropic(c.client, NOW).request(ANTHROPIC, MODEL);
    const got = { operation: req.operation, stream: req.stream, headers: req.headers, body: JSON.parse(req.body) as unknown };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
    expect(c.client).toEqual(frozen);
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the field', (c) => {
    const frozen = structuredClone(c.client);
    const got = refusal(() => responsesFromAnthropic(c.client, NOW).request(ANTHROPIC, MODEL));
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
    expect(c.client).toEqual(frozen);
  });
});

describe('responses -> anthropic: answers', () => {
  it.each(golden.data.response)('$name', (c) => {
    const client = { model: 'public-model', input: 'hi', tools: [{ type: 'namespace', name: 'agents', tools: [{ type: 'function', name: 'close_agent' }] }] };
    const t = responsesFromAnthropic(client, NOW);
    t.request(ANTHROPIC, MODEL);
    const out = t.response(JSON.stringify(c.upstream), 'public-model');
    const got = { body: JSON.parse(out.body) as unknown, usage: out.usage };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
  });
});

describe('responses -> anthropic: streams', () => {
  it.each(golden.data.stream)('$name', (c) => {
    const t = responsesFromAnthropic({ input: 'hi', ...(c.client ?? { stream: true }) }, NOW);
    t.request(ANTHROPIC, MODEL);
    const tr = t.stream('public-model');
    const text =
      upstreamEvents(c.upstream)
        .map((e) => tr.event(e))
        .join('') + (tr.complete && !tr.failed ? tr.finish() : '');
    const got = { events: clientEvents(text), usage: tr.usage(), complete: tr.complete, failed: tr.failed };
    if (UPDATE) c.expected = got;
    expect(got).toEqual(c.expected);
  });
});
