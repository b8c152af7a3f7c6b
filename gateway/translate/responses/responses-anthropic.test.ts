// Golden tests of the Responses-client -> Anthropic-upstream translator on wire samples (testdata/).
import { afterAll, describe, expect, it } from 'vitest';
import { responsesFromAnthropic } from './responses-anthropic.ts';
import { answered, expectGolden, loadGolden, MODEL, refusal, streamed, TARGET, UPDATE, wire } from '../testdata/golden.ts';

const golden = loadGolden('responses-anthropic');
const NOW = (): number => 1_767_225_600_000;
// Refusals are recorded on a route with hostedTools: reject, so the built-in tools' cases show that refusal (the
// default, drop, is in hosted-tools.test.ts).
const STRICT = { ...MODEL, hostedTools: 'reject' as const };
const ANTHROPIC = { ...TARGET, provider: 'anthropic' as const };
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('responses -> anthropic: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const frozen = structuredClone(c.client);
    expectGolden(c, wire(responsesFromAnthropic(c.client, NOW).request(ANTHROPIC, STRICT)));
    expect(c.client).toEqual(frozen);
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the field', (c) => {
    const frozen = structuredClone(c.client);
    expectGolden(
      c,
      refusal(() => responsesFromAnthropic(c.client, NOW).request(ANTHROPIC, STRICT)),
    );
    expect(c.client).toEqual(frozen);
  });
});

describe('responses -> anthropic: answers', () => {
  it.each(golden.data.response)('$name', (c) => {
    const client = { model: 'public-model', input: 'hi', tools: [{ type: 'namespace', name: 'agents', tools: [{ type: 'function', name: 'close_agent' }] }] };
    const t = responsesFromAnthropic(client, NOW);
    t.request(ANTHROPIC, MODEL);
    expectGolden(c, answered(t, c.upstream));
  });
});

describe('responses -> anthropic: streams', () => {
  it.each(golden.data.stream)('$name', (c) => {
    const t = responsesFromAnthropic({ input: 'hi', ...(c.client ?? { stream: true }) }, NOW);
    t.request(ANTHROPIC, MODEL);
    expectGolden(c, streamed(t.stream('public-model'), c.upstream));
  });
});
