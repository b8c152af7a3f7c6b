// Golden tests of the Responses-client -> Bedrock-Converse-upstream translator on wire samples (testdata/converse/).
import { afterAll, describe, expect, it } from 'vitest';
import { responsesFromConverse } from './responses-converse.ts';
import { answered, expectGolden, loadGolden, MODEL, refusal, streamed, TARGET, UPDATE, wire } from '../testdata/golden.ts';
import { deepFreeze } from '../testdata/freeze.ts';

const golden = loadGolden('converse/responses-converse');
const NOW = (): number => 1_767_225_600_000;
const ID = (): string => 'msg_bdrk_0123456789abcdef';
// Refusals are recorded on a route with hostedTools: reject (the default, drop, is recorded in the requests).
const STRICT = { ...MODEL, hostedTools: 'reject' as const };
const CONVERSE = { ...TARGET, provider: 'bedrock' as const, upstreamModel: 'amazon.nova-pro-v1:0' };
afterAll(() => {
  if (UPDATE) golden.save();
});

describe('responses -> converse: requests', () => {
  it.each(golden.data.request)('$name', (c) => {
    const frozen = structuredClone(c.client);
    const req = responsesFromConverse(deepFreeze(c.client), NOW, ID).request(CONVERSE, MODEL);
    expectGolden(c, { ...wire(req), droppedTools: req.droppedTools ?? [] });
    expect(c.client).toEqual(frozen);
  });

  it.each(golden.data.refuse)('refuses $name with a 400 naming the field', (c) => {
    const frozen = structuredClone(c.client);
    expectGolden(
      c,
      refusal(() => responsesFromConverse(deepFreeze(c.client), NOW, ID).request(CONVERSE, STRICT)),
    );
    expect(c.client).toEqual(frozen);
  });
});

describe('responses -> converse: answers', () => {
  it.each(golden.data.response)('$name', (c) => {
    const t = responsesFromConverse({ model: 'public-model', input: 'hi' }, NOW, ID);
    t.request(CONVERSE, MODEL);
    expectGolden(c, answered(t, c.upstream));
  });
});

describe('responses -> converse: streams', () => {
  it.each(golden.data.stream)('$name', (c) => {
    const t = responsesFromConverse({ input: 'hi', ...(c.client ?? { stream: true }) }, NOW, ID);
    t.request(CONVERSE, MODEL);
    expectGolden(c, streamed(t.stream('public-model'), c.upstream));
  });
});
