// A non-Claude model on AWS Bedrock (Converse, ConverseStream) through the gateway, end to end: the official openai
// and @anthropic-ai/sdk clients call the gateway, which translates to Converse (the converse translators of
// gateway/translate), signs with SigV4 and calls the fake Bedrock runtime. Plain and streamed, tools, usage and cost
// exact against what the fake reported (cache read and write tokens included, billed as input), a streamed call costs
// what the plain one does, a throttled Converse target falls back, an exception mid-stream ends the client's stream
// with an error. It needs both halves of the Converse seam: this transport and the translators.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/runtime.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { eventually, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';

const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAFAKECONVERSE0001', AWS_SECRET_ACCESS_KEY: 'fake-converse-secret-0123456789' };
const LLAMA = 'meta.llama3-1-8b-instruct-v1:0';
const NANO_IN = 1040;
const NANO_OUT = 2080;
const USAGE = { input: 12, output: 17, cacheRead: 40, cacheWrite: 8 };
const COST = (USAGE.input + USAGE.cacheRead + USAGE.cacheWrite) * NANO_IN + USAGE.output * NANO_OUT;

let bedrock: FakeBedrock;
let spare: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  [bedrock, spare] = await Promise.all([
    startFakeBedrock({ keys: [{ accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: KEYS.AWS_SECRET_ACCESS_KEY }] }),
    startFakeUpstream('spare-openai'),
  ]);
  const b = basics();
  const llama = {
    name: 'bedrock-llama',
    provider: 'bedrock',
    region: 'us-east-1',
    baseUrl: bedrock.url,
    upstreamModel: LLAMA,
    credentials: { secretKeyRef: { name: 'aws-keys' } },
  } as never;
  gw = await startGateway([
    ...b.docs,
    secret('aws-keys', KEYS),
    route('llama', [llama]),
    route('llama-ha', [llama, { name: 'spare', provider: 'openai', baseUrl: spare.baseUrl, weight: 0 }]),
  ]);
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([bedrock?.close(), spare?.close()]);
});

describe('Llama on Bedrock (Converse) through the gateway', () => {
  it('answers OpenAI chat completions through Converse, signed, with exact usage and cost, streamed at the same cost', async () => {
    bedrock.enqueue({ kind: 'reply', text: 'Hello from Llama.', usage: USAGE }, { kind: 'reply', text: 'Hello from Llama.', usage: USAGE });
    const before = gw.sink.events.length;
    const plain = await openai.chat.completions.create({
      model: 'llama',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(plain.choices[0]?.message.content).toBe('Hello from Llama.');
    expect(plain.usage).toMatchObject({ prompt_tokens: 60, completion_tokens: 17 });
    const call = bedrock.calls.at(-1)!;
    expect(call.action).toBe('converse');
    expect(call.auth).toBe(KEYS.AWS_ACCESS_KEY_ID);
    expect(call.body).toMatchObject({ system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
    expect(call.body.model).toBeUndefined();
    const s = await openai.chat.completions.create({
      model: 'llama',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    for await (const c of s) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello from Llama.');
    expect(bedrock.calls.at(-1)?.action).toBe('converse-stream');
    await eventually(() => gw.sink.events.length >= before + 2);
    const [a, b] = gw.sink.events.slice(-2);
    expect(a).toMatchObject({ inputTokens: 60, outputTokens: 17, cacheReadTokens: 40, cacheWriteTokens: 8, costNano: COST });
    expect(b).toMatchObject({ stream: true, costNano: COST });
  });

  it('passes tools and tool calls both ways', async () => {
    bedrock.enqueue({ kind: 'reply', tools: [{ id: 'tooluse_1', name: 'lookup', input: { q: 'x' } }] });
    const r = await openai.chat.completions.create({
      model: 'llama',
      messages: [{ role: 'user', content: 'look it up' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
    });
    expect(r.choices[0]?.finish_reason).toBe('tool_calls');
    expect(r.choices[0]?.message.tool_calls?.[0]).toMatchObject({ id: 'tooluse_1', function: { name: 'lookup', arguments: '{"q":"x"}' } });
    expect(bedrock.calls.at(-1)?.body).toMatchObject({ toolConfig: { tools: [{ toolSpec: { name: 'lookup', inputSchema: { json: { type: 'object' } } } }] } });
  });

  it('answers the Anthropic endpoint through Converse, streamed', async () => {
    bedrock.enqueue({ kind: 'reply', text: 'Hi Anthropic client.', usage: USAGE });
    const stream = anthropic.messages.stream({ model: 'llama', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Hi Anthropic client.' }]);
    expect(final.usage.output_tokens).toBe(17);
  });

  it('falls back when Converse is throttled, and ends a stream with an error after an exception mid-stream', async () => {
    bedrock.enqueue({ kind: 'error', type: 'ThrottlingException', status: 429 });
    const { response } = await openai.chat.completions.create({ model: 'llama-ha', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(response.headers.get('x-svc-fallback-reason')).toBe('upstream_429');
    expect(response.headers.get('x-svc-upstream')).toBe('spare');
    bedrock.enqueue({ kind: 'stream-exception', afterEvents: 2, type: 'modelStreamErrorException' });
    const s = await openai.chat.completions.create({ model: 'llama', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const read = async (): Promise<void> => {
      for await (const _c of s) {
        /* until the error */
      }
    };
    await expect(read()).rejects.toThrow();
  });
});
