// The fake Bedrock runtime speaks the real wire format: the official @aws-sdk/client-bedrock-runtime (over HTTP/1.1
// with NodeHttpHandler) signs its requests, and parses its answers, event streams and errors as it does the real
// service's. The fake, in turn, verifies the SDK's SigV4 signatures (so it will verify the gateway's the same way).
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  CountTokensCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/runtime.ts';
import { rgbaPng } from '../helpers/png.ts';

const KEY = { accessKeyId: 'AKIAFAKESDK000000001', secretAccessKey: 'fake-sdk-secret-0123456789' };
const TEMP = { accessKeyId: 'ASIAFAKESDK000000002', secretAccessKey: 'fake-sdk-temp-secret', sessionToken: 'fake-session-token-abc' };
const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const LLAMA = 'meta.llama3-1-8b-instruct-v1:0';

let fake: FakeBedrock;

function client(credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): BedrockRuntimeClient {
  return new BedrockRuntimeClient({ region: 'us-east-1', endpoint: fake.url, credentials, requestHandler: new NodeHttpHandler(), maxAttempts: 1 });
}

beforeAll(async () => {
  fake = await startFakeBedrock({ keys: [KEY, TEMP, { accessKeyId: 'ASIAEXPIRED000000003', secretAccessKey: 's', sessionToken: 'old', expired: true }] });
});

afterAll(async () => {
  await fake?.close();
});

describe('the fake Bedrock runtime, read by @aws-sdk/client-bedrock-runtime', () => {
  it('answers Converse with output, stop reason and usage (cache tokens included)', async () => {
    fake.enqueue({ kind: 'reply', text: 'hi there', usage: { input: 30, output: 4, cacheRead: 7, cacheWrite: 2 } });
    const out = await client(KEY).send(new ConverseCommand({ modelId: LLAMA, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }));
    expect(out.output?.message?.content?.[0]?.text).toBe('hi there');
    expect(out.stopReason).toBe('end_turn');
    expect(out.usage).toMatchObject({ inputTokens: 30, outputTokens: 4, cacheReadInputTokens: 7, cacheWriteInputTokens: 2 });
    expect(fake.calls.at(-1)?.auth).toBe(KEY.accessKeyId);
  });

  it('streams ConverseStream events the SDK decodes, frames split across TCP chunks too, tool use included', async () => {
    for (const split of [false, true]) {
      fake.splitFrames = split;
      fake.enqueue({
        kind: 'reply',
        text: 'one two three',
        tools: [{ name: 'get_weather', input: { city: 'Paris' } }],
        usage: { input: 11, output: 5, cacheRead: 3 },
      });
      const out = await client(TEMP).send(new ConverseStreamCommand({ modelId: LLAMA, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }));
      let text = '';
      let toolInput = '';
      let stop = '';
      let usage: Record<string, unknown> = {};
      for await (const ev of out.stream ?? []) {
        if (ev.contentBlockDelta?.delta?.text) text += ev.contentBlockDelta.delta.text;
        if (ev.contentBlockDelta?.delta?.toolUse?.input) toolInput += ev.contentBlockDelta.delta.toolUse.input;
        if (ev.messageStop) stop = ev.messageStop.stopReason ?? '';
        if (ev.metadata) usage = { ...ev.metadata.usage };
      }
      expect({ text, tool: JSON.parse(toolInput) as unknown, stop }).toEqual({ text: 'one two three', tool: { city: 'Paris' }, stop: 'tool_use' });
      expect(usage).toMatchObject({ inputTokens: 11, outputTokens: 5, cacheReadInputTokens: 3 });
    }
    fake.splitFrames = false;
    expect(fake.calls.at(-1)?.auth, 'temporary credentials: the session token was signed and checked').toBe(TEMP.accessKeyId);
  });

  it('streams InvokeModelWithResponseStream chunks whose bytes are Anthropic stream events', async () => {
    fake.enqueue({ kind: 'reply', text: 'claude says hi', usage: { input: 40, output: 6, cacheRead: 12, cacheWrite: 5 } });
    const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    const out = await client(KEY).send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, body, contentType: 'application/json' }));
    const types: string[] = [];
    let text = '';
    for await (const ev of out.body ?? []) {
      const e = JSON.parse(Buffer.from(ev.chunk?.bytes ?? new Uint8Array()).toString('utf8')) as { type: string; delta?: { text?: string } };
      types.push(e.type);
      if (e.delta?.text) text += e.delta.text;
    }
    expect(text).toBe('claude says hi');
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(fake.calls.at(-1)?.rawPath, 'the model id is one URL-encoded path segment').toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`);
  });

  it('answers InvokeModel for Claude and Titan embeddings, and CountTokens', async () => {
    const claude = await client(KEY).send(
      new InvokeModelCommand({
        modelId: CLAUDE,
        body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      }),
    );
    expect((JSON.parse(Buffer.from(claude.body).toString()) as { type: string }).type).toBe('message');
    const titan = await client(KEY).send(new InvokeModelCommand({ modelId: 'amazon.titan-embed-text-v2:0', body: JSON.stringify({ inputText: 'a b c' }) }));
    expect(JSON.parse(Buffer.from(titan.body).toString())).toMatchObject({ inputTextTokenCount: 3 });
    // Nova Canvas (TEXT_IMAGE): as many base64 PNGs as numberOfImages.
    const canvas = await client(KEY).send(
      new InvokeModelCommand({
        modelId: 'amazon.nova-canvas-v1:0',
        body: JSON.stringify({
          taskType: 'TEXT_IMAGE',
          textToImageParams: { text: 'a boat' },
          imageGenerationConfig: { numberOfImages: 2, width: 1024, height: 1024, quality: 'premium' },
        }),
      }),
    );
    expect((JSON.parse(Buffer.from(canvas.body).toString()) as { images: string[] }).images).toHaveLength(2);
    // Nova Canvas (INPAINTING): the image, the prompt and a black-and-white mask PNG of the image's size.
    const image = rgbaPng(8, 4, () => 255).toString('base64');
    const inpainted = await client(KEY).send(
      new InvokeModelCommand({
        modelId: 'amazon.nova-canvas-v1:0',
        body: JSON.stringify({
          taskType: 'INPAINTING',
          inPaintingParams: { image, text: 'a boat', maskImage: rgbaPng(8, 4, () => 0).toString('base64') },
          imageGenerationConfig: { numberOfImages: 3, quality: 'standard' },
        }),
      }),
    );
    expect((JSON.parse(Buffer.from(inpainted.body).toString()) as { images: string[] }).images).toEqual([image, image, image]);
    await expect(
      client(KEY).send(
        new InvokeModelCommand({
          modelId: 'amazon.nova-canvas-v1:0',
          body: JSON.stringify({ taskType: 'INPAINTING', inPaintingParams: { image, text: 'a boat', maskImage: rgbaPng(2, 2, () => 0).toString('base64') } }),
        }),
      ),
    ).rejects.toMatchObject({ name: 'ValidationException', $metadata: { httpStatusCode: 400 } });
    const counted = await client(KEY).send(
      new CountTokensCommand({
        modelId: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
        input: { invokeModel: { body: Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'hello' }] })) } },
      }),
    );
    expect(counted.inputTokens).toBeGreaterThan(0);
    // The SDK's CountTokens wire shape is what the gateway sends: {input: {invokeModel: {body: base64}}}.
    expect(fake.calls.at(-1)?.body).toEqual({
      input: { invokeModel: { body: Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'hello' }] })).toString('base64') } },
    });
  });

  it('refuses a wrong secret, an unknown key and an expired session token with AWS error shapes the SDK names', async () => {
    const cmd = (): ConverseCommand => new ConverseCommand({ modelId: LLAMA, messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
    await expect(client({ ...KEY, secretAccessKey: 'wrong' }).send(cmd())).rejects.toMatchObject({
      name: 'InvalidSignatureException',
      $metadata: { httpStatusCode: 403 },
      message: expect.stringContaining('The request signature we calculated does not match') as unknown,
    });
    await expect(client({ accessKeyId: 'AKIAUNKNOWN', secretAccessKey: 'x' }).send(cmd())).rejects.toMatchObject({ name: 'UnrecognizedClientException' });
    await expect(client({ accessKeyId: 'ASIAEXPIRED000000003', secretAccessKey: 's', sessionToken: 'old' }).send(cmd())).rejects.toMatchObject({
      name: 'ExpiredTokenException',
    });
  });

  it('fails with the exceptions the SDK models: throttling before, an exception frame inside a stream', async () => {
    fake.enqueue({ kind: 'error', type: 'ThrottlingException', status: 429, message: 'Too many requests, please wait before trying again.' });
    await expect(client(KEY).send(new ConverseCommand({ modelId: LLAMA, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }))).rejects.toMatchObject({
      name: 'ThrottlingException',
      $metadata: { httpStatusCode: 429 },
    });
    fake.enqueue({ kind: 'stream-exception', afterEvents: 2, type: 'modelStreamErrorException', message: 'the model failed mid-stream' });
    const out = await client(KEY).send(new ConverseStreamCommand({ modelId: LLAMA, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }));
    const read = async (): Promise<void> => {
      for await (const _ev of out.stream ?? []) {
        /* reads until the exception frame */
      }
    };
    await expect(read()).rejects.toMatchObject({ name: 'ModelStreamErrorException' });
  });
});
