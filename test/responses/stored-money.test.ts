// Money and bounds of stored Responses: N concurrent continued calls against a budget that fits N-1 holds on the
// rebuilt input admit exactly N-1; a store: true call over the account's bound, and a chain whose rebuilt input passes
// it, are refused with 400 before any upstream, costing nothing and storing nothing.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN, MAX_OUT, OUT, startStoredEnv, type StoredEnv } from './stored-setup.ts';

const N = 5;
const TURN1 = `Keep this in mind: ${'lorem ipsum dolor sit amet '.repeat(40)}`;

describe.each(['gpt-chat', 'claude-test'])('stored responses money, %s', (model) => {
  let env: StoredEnv;
  let hold = 0;
  let firstId = '';

  beforeAll(async () => {
    // A first gateway only to learn the continued call's hold from what it would rebuild (ids are random, sizes not).
    const probe = await startStoredEnv();
    const c = new OpenAI({ baseURL: `${probe.gw.url}/v1`, apiKey: probe.keys.builder, maxRetries: 0 });
    const first = await c.responses.create({ model, input: TURN1 });
    hold = holdOf(await c.responses.inputItems.list(first.id, { order: 'asc' }), first, model);
    await probe.close();
    env = await startStoredEnv({ tightBudgetNano: (N - 1) * hold });
    const c2 = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: env.keys.builder, maxRetries: 0 });
    firstId = (await c2.responses.create({ model, input: TURN1 })).id;
  });

  afterAll(async () => {
    await env?.close();
  });

  it(`of ${N} concurrent continued calls against a budget that fits ${N - 1} holds on the rebuilt input, exactly ${N - 1} are admitted`, async () => {
    const slow = model === 'claude-test' ? env.anthropic : env.openai;
    slow.fallback = () => ({ kind: 'reply', delayMs: 1500 });
    const tight = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: env.keys.tight, maxRetries: 0 });
    const statuses: number[] = [];
    const all = Array.from({ length: N }, () =>
      tight.responses.create({ model, input: 'Next?', previous_response_id: firstId, max_output_tokens: MAX_OUT }).then(
        () => statuses.push(200),
        (err: unknown) => statuses.push(err instanceof OpenAI.APIError ? (err.status ?? 0) : -1),
      ),
    );
    await Promise.all(all);
    slow.fallback = () => ({ kind: 'reply' });
    expect(statuses.sort()).toEqual([...Array<number>(N - 1).fill(200), 402]);
    const tightEvents = env.gw.sink.events.filter((e) => e.apiKey === 'tight-key');
    expect(tightEvents.filter((e) => e.status === 200)).toHaveLength(N - 1);
    // Each admitted call settled at its exact cost, as the upstream reported it.
    for (const e of tightEvents.filter((x) => x.status === 200)) expect(e.costNano).toBe(e.inputTokens * IN + e.outputTokens * OUT);
  });
});

/** The hold of a continued call with input 'Next?': the rebuilt body's bytes at the input price, the cap at the output's. */
function holdOf(items: { data: object[] }, first: OpenAI.Responses.Response, model: string): number {
  const strip = (x: object): object => {
    const { id, ...rest } = x as { id?: string };
    return typeof id === 'string' && /_svc[0-9a-f]{40}$/.test(id) ? rest : x;
  };
  const input = [...items.data.map(strip), ...first.output, { type: 'message', role: 'user', content: 'Next?' }];
  const body = { model, input, max_output_tokens: MAX_OUT };
  return Buffer.byteLength(JSON.stringify(body)) * IN + MAX_OUT * OUT;
}

describe('stored responses bounds', () => {
  let env: StoredEnv;
  let client: OpenAI;
  const BOUND = 4000;

  beforeAll(async () => {
    env = await startStoredEnv({ accountBytes: BOUND });
    client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: env.keys.builder, maxRetries: 0 });
  });

  afterAll(async () => {
    await env?.close();
  });

  const refusal = async (p: Promise<unknown>): Promise<{ status?: number; code?: string; param?: string }> => {
    try {
      await p;
      return {};
    } catch (err) {
      const e = err as InstanceType<typeof OpenAI.APIError>;
      const body = e.error as { code?: string; param?: string };
      return { status: e.status, code: body.code, param: body.param };
    }
  };

  it('refuses a chain whose rebuilt input passes the bound, and store: true over it; nothing charged, nothing stored', async () => {
    const chunk = 'x'.repeat(1200);
    let prev = (await client.responses.create({ model: 'gpt-chat', input: chunk })).id;
    prev = (await client.responses.create({ model: 'gpt-chat', input: chunk, previous_response_id: prev })).id;
    const calls = env.openai.calls.length;
    const events = env.gw.sink.events.length;
    const spent = env.gw.sink.events.reduce((s, e) => s + e.costNano, 0);
    // Turn 3 would send three chunks and two answers upstream: over 4000 bytes.
    expect(await refusal(client.responses.create({ model: 'gpt-chat', input: chunk, previous_response_id: prev, store: false }))).toEqual({
      status: 400,
      code: 'conversation_too_large',
      param: 'previous_response_id',
    });
    // The account holds two records of ~1.5 kB: one more chunk with store: true does not fit.
    expect(await refusal(client.responses.create({ model: 'gpt-chat', input: chunk }))).toEqual({ status: 400, code: 'stored_responses_full', param: 'store' });
    expect(env.openai.calls.length).toBe(calls);
    expect(env.gw.sink.events.slice(events).every((e) => e.costNano === 0)).toBe(true);
    expect(env.gw.sink.events.reduce((s, e) => s + e.costNano, 0)).toBe(spent);
    // store: false still works, and deleting makes room again.
    expect((await client.responses.create({ model: 'gpt-chat', input: chunk, store: false })).status).toBe('completed');
    await client.responses.delete(prev);
    expect(stored(await client.responses.create({ model: 'gpt-chat', input: chunk }))).toBe(true);
  });
});

/** The response's `store` (OpenAI returns it; the SDK's type leaves it out). */
function stored(r: object): unknown {
  return (r as { store?: unknown }).store;
}
