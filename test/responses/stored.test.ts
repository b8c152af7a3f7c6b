// Stored Responses with the official openai SDK (responses.create / retrieve / delete / inputItems.list /
// inputTokens.count), streamed and not, over each kind of upstream: Chat Completions (translated), Responses (passed
// through) and Anthropic (translated). A continued call sends the whole conversation upstream and is held and billed
// on it; a stored response is its account's only; bad ids cost nothing and store nothing.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IN, KINDS, MAX_OUT, OUT, replyUsage, startStoredEnv, upstreamBodies, type StoredEnv } from './stored-setup.ts';

let env: StoredEnv;
let client: OpenAI;
let second: OpenAI;
let other: OpenAI;

const sdk = (key: string): OpenAI => new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: key, maxRetries: 0 });

beforeAll(async () => {
  env = await startStoredEnv();
  client = sdk(env.keys.builder);
  second = sdk(env.keys.second);
  other = sdk(env.keys.free);
});

afterAll(async () => {
  await env?.close();
});

/** The response's `store` (OpenAI returns it; the SDK's type leaves it out). */
const storeOf = (r: object): unknown => (r as { store?: unknown }).store;
const spent = (): number => env.gw.sink.events.reduce((s, e) => s + e.costNano, 0);
const LONG = `Remember this list: ${'alpha beta gamma delta '.repeat(20)}`;

async function status(p: Promise<unknown>): Promise<{ status: number; code: string | null | undefined; param: string | null | undefined }> {
  try {
    await p;
    return { status: 200, code: null, param: null };
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    const body = err.error as { code?: string; param?: string } | undefined;
    return { status: err.status ?? 0, code: body?.code, param: body?.param };
  }
}

describe.each(KINDS)('stored responses, $kind upstream', ({ kind, model, text }) => {
  beforeEach(() => {
    env.openai.calls.length = 0;
    env.anthropic.calls.length = 0;
  });

  it('stores by default, reads back with any key of the account, and continues with the whole conversation, billed on it', async () => {
    const first = await client.responses.create({ model, input: LONG, instructions: 'Be brief.', metadata: { topic: 'lists' } });
    expect(first.id).toMatch(/^resp_svc[0-9a-f]{40}$/);
    expect(storeOf(first)).toBe(true);
    expect(first.output_text).toBe(text);
    // Any key of the account reads it, right after the call returned.
    const got = await second.responses.retrieve(first.id);
    expect(got).toEqual(first);
    // As the upstream's answer says them (the Responses fake echoes neither; OpenAI does).
    if (kind !== 'responses') expect([got.instructions, got.metadata]).toEqual(['Be brief.', { topic: 'lists' }]);
    const items = await second.responses.inputItems.list(first.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: LONG }] });

    // The continued call: the upstream gets turn 1 (input and answer) and turn 2; billed on what it reports.
    replyUsage(env, kind, 'You listed alpha.', 321, 7);
    const before = spent();
    const next = await client.responses.create({ model, input: 'What was first?', previous_response_id: first.id, max_output_tokens: MAX_OUT });
    expect(next.previous_response_id).toBe(first.id);
    expect(next.output_text).toBe('You listed alpha.');
    const sent = JSON.stringify(upstreamBodies(env, kind).at(-1));
    expect(sent).toContain('alpha beta gamma delta');
    expect(sent).toContain(text);
    expect(sent).toContain('What was first?');
    expect(sent).not.toContain('previous_response_id');
    expect(sent).not.toContain('_svc');
    // 321 tokens are more than the client's own body could hold: the bound is the rebuilt input (nothing clamped).
    expect(env.gw.sink.events.at(-1)).toMatchObject({ status: 200, inputTokens: 321, outputTokens: 7, costNano: 321 * IN + 7 * OUT });
    expect(env.gw.sink.events.at(-1)?.usageClamped).toBeFalsy();
    expect(spent() - before).toBe(321 * IN + 7 * OUT);
    // Its input items are the whole context: turn 1's input and output, then its own.
    const all = await client.responses.inputItems.list(next.id, { order: 'asc' });
    expect(all.data.map((x) => x.type)).toEqual(['message', 'message', 'message']);
    expect(JSON.stringify(all.data[1])).toContain(text);
    const page = await client.responses.inputItems.list(next.id, { order: 'asc', limit: 1, after: all.data[0]?.id });
    expect(page.data).toEqual([all.data[1]]);
    expect(page.has_more).toBe(true);
  });

  it('stores a streamed answer: the final event carries the id, and a GET right after the stream finds it', async () => {
    const stream = client.responses.stream({ model, input: 'Hi there' });
    const final = await stream.finalResponse();
    expect(final.id).toMatch(/^resp_svc/);
    expect((await client.responses.retrieve(final.id)).output_text).toBe(text);
    const next = client.responses.stream({ model, input: 'And again?', previous_response_id: final.id });
    const done = await next.finalResponse();
    expect(done.previous_response_id).toBe(final.id);
    expect(JSON.stringify(upstreamBodies(env, kind).at(-1))).toContain('Hi there');
    expect((await client.responses.retrieve(done.id)).status).toBe('completed');
  });

  it('keeps nothing with store: false', async () => {
    const r = await client.responses.create({ model, input: 'Forget me', store: false });
    expect(storeOf(r)).not.toBe(true);
    expect(await status(client.responses.retrieve(r.id))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('deletes: then it is 404 to read and 400 to continue, costing nothing', async () => {
    const r = await client.responses.create({ model, input: 'Short-lived' });
    const deleted = await second.responses.delete(r.id);
    expect(deleted).toEqual({ id: r.id, object: 'response', deleted: true });
    expect(await status(client.responses.retrieve(r.id))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await status(client.responses.delete(r.id))).toMatchObject({ status: 404, code: 'not_found' });
    const calls = upstreamBodies(env, kind).length;
    const before = { spent: spent(), events: env.gw.sink.events.length };
    expect(await status(client.responses.create({ model, input: 'Next', previous_response_id: r.id }))).toEqual({
      status: 400,
      code: 'previous_response_not_found',
      param: 'previous_response_id',
    });
    expect(upstreamBodies(env, kind).length).toBe(calls);
    expect(spent()).toBe(before.spent);
  });

  it("is another account's to nobody: 404 to read, list or delete, 400 to continue", async () => {
    const r = await client.responses.create({ model, input: 'Mine' });
    expect(await status(other.responses.retrieve(r.id))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await status(other.responses.inputItems.list(r.id))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await status(other.responses.delete(r.id))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await status(other.responses.create({ model: 'gpt-chat', input: 'x', previous_response_id: r.id }))).toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
    });
    expect(await status(other.responses.inputTokens.count({ input: 'x', previous_response_id: r.id }))).toMatchObject({ status: 400 });
    // Still there for its own account; a revoked key of that account gets 401.
    expect((await client.responses.retrieve(r.id)).id).toBe(r.id);
    expect(await status(sdk(env.keys.revoked).responses.retrieve(r.id))).toMatchObject({ status: 401, code: 'key_revoked' });
  });

  it('resolves an item_reference to an item of the chain', async () => {
    const first = await client.responses.create({ model, input: 'The secret word is heliotrope.' });
    const [item] = (await client.responses.inputItems.list(first.id)).data;
    await client.responses.create({
      model,
      previous_response_id: first.id,
      input: [
        { type: 'item_reference', id: item?.id as string },
        { role: 'user', content: 'Say it again.' },
      ],
    });
    const sent = JSON.stringify(upstreamBodies(env, kind).at(-1));
    expect(sent.split('heliotrope').length - 1).toBe(2);
    expect(await status(client.responses.create({ model, input: [{ type: 'item_reference', id: 'msg_nowhere' }] }))).toMatchObject({
      status: 400,
      param: 'input[0]',
    });
  });
});

describe('what a stored response cannot do here', () => {
  it('refuses GET ?stream=true and cancel with a 400 naming why; an unknown id is 404 first', async () => {
    const r = await client.responses.create({ model: 'gpt-chat', input: 'Hi' });
    const auth = { authorization: `Bearer ${env.keys.builder}` };
    const streamed = await fetch(`${env.gw.url}/v1/responses/${r.id}?stream=true`, { headers: auth });
    expect(streamed.status).toBe(400);
    expect(((await streamed.json()) as { error: { param: string } }).error.param).toBe('stream');
    expect(await status(client.responses.cancel(r.id))).toMatchObject({ status: 400, code: 'unsupported_content' });
    expect(await status(client.responses.cancel('resp_unknown'))).toMatchObject({ status: 404, code: 'not_found' });
    expect((await fetch(`${env.gw.url}/v1/responses/${r.id}`)).status).toBe(401);
  });
});

describe('POST /v1/responses/input_tokens', () => {
  it('counts the input (with a chain) for free, as the estimate count_tokens uses', async () => {
    const before = env.gw.sink.events.length;
    const one = await client.responses.inputTokens.count({ model: 'gpt-chat', input: 'Hello there, how are you?' });
    expect(one.object).toBe('response.input_tokens');
    expect(one.input_tokens).toBeGreaterThan(0);
    const r = await client.responses.create({ model: 'gpt-chat', input: LONG });
    const more = await client.responses.inputTokens.count({ model: 'gpt-chat', input: 'Hello there, how are you?', previous_response_id: r.id });
    expect(more.input_tokens).toBeGreaterThan(one.input_tokens + LONG.length / 4 - 1);
    expect(env.gw.sink.events.length).toBe(before + 1);
  });
});

describe('retention', () => {
  it('forgets a response past SVC_RESPONSES_RETENTION_DAYS (30 by default)', async () => {
    const r = await client.responses.create({ model: 'gpt-chat', input: 'Old news' });
    env.clock.now += 29 * 86_400_000;
    expect((await client.responses.retrieve(r.id)).id).toBe(r.id);
    env.clock.now += 1 * 86_400_000 + 1;
    expect(await status(client.responses.retrieve(r.id))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await status(client.responses.create({ model: 'gpt-chat', input: 'x', previous_response_id: r.id }))).toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
    });
  });
});
