// The Gemini translators checked by Google's own client, @google/genai: a loopback server on 127.0.0.1 stands for
// the Gemini API and Vertex AI. Requests: the SDK builds the same request from its typed parameters and the
// bodies must be equal (field names, nesting, casing). Answers: the SDK parses the golden answers and streams
// the translators read, and finds the same text, calls and finish as the translators pass on.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FinishReason, FunctionCallingConfigMode, GoogleGenAI, type GenerateContentParameters } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicFromGemini } from '../anthropic/anthropic-gemini.ts';
import { anthropicCountTokensFromGemini } from '../anthropic/anthropic-gemini-count.ts';
import { estimateInputTokens } from '../count-tokens.ts';
import { openAIFromGemini } from '../openai/openai-gemini.ts';
import { geminiEmbedMethod } from './gemini-embed-method.ts';
import { openAIEmbeddingsFromGemini } from '../openai/openai-gemini-embeddings.ts';
import { NO_USAGE, type Usage } from '../types.ts';
import { expectConforms } from '../../../test/helpers/openapi.ts';
import { loadGolden, MODEL } from '../testdata/golden.ts';
import { targetOf } from '../testdata/gemini/harness.ts';

let server: Server;
let baseUrl = '';
let seen: { url: string; body: unknown } | null = null;
let reply: { sse: boolean; text: string } = { sse: false, text: '{}' };

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      seen = { url: req.url ?? '', body: JSON.parse(raw) as unknown };
      res.writeHead(200, { 'content-type': reply.sse ? 'text/event-stream' : 'application/json' });
      res.end(reply.text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const geminiApi = (): GoogleGenAI => new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl } });
// Vertex AI in express mode (an API key): the SDK's Vertex request converters without a credential chain.
const vertex = (): GoogleGenAI => new GoogleGenAI({ vertexai: true, apiKey: 'test-key', httpOptions: { baseUrl } });

async function sdkBody(ai: GoogleGenAI, params: GenerateContentParameters): Promise<unknown> {
  reply = { sse: false, text: JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }) };
  await ai.models.generateContent(params);
  return seen?.body;
}

const openai = loadGolden('gemini/openai-gemini').data;
const anthropic = loadGolden('gemini/anthropic-gemini').data;
const caseOf = <T extends { name: string }>(list: T[], start: string): T => list.find((c) => c.name.startsWith(start))!;

describe('requests equal what @google/genai sends for the same parameters', () => {
  it('OpenAI client: system, merged turns, sampling, seed, penalties (Gemini API)', async () => {
    const c = caseOf(openai.request, 'system and developer');
    const ours = JSON.parse(openAIFromGemini(c.client).request(targetOf(c), MODEL).body) as unknown;
    const sdk = await sdkBody(geminiApi(), {
      model: 'gemini-2.5-flash',
      contents: [
        { role: 'user', parts: [{ text: 'Hello!' }, { text: 'Are you there?' }] },
        { role: 'model', parts: [{ text: 'Bonjour !' }] },
        { role: 'user', parts: [{ text: 'How are you?' }] },
      ],
      config: {
        systemInstruction: { parts: [{ text: 'You are a helpful assistant.' }, { text: 'Answer in French.' }, { text: 'From now on, answer in German.' }] },
        maxOutputTokens: 4096,
        temperature: 1.4,
        topP: 0.8,
        stopSequences: ['\n\n'],
        seed: 7,
        presencePenalty: 0.2,
        frequencyPenalty: 0.5,
      },
    });
    expect(ours).toEqual(sdk);
    expect(seen?.url).toMatch(/\/models\/gemini-2\.5-flash:generateContent$/);
  });

  it('OpenAI client: tools with JSON Schema, forced function, signed calls, function responses, response JSON schema (Gemini API)', async () => {
    const c = caseOf(openai.request, 'tools, forced function');
    const ours = JSON.parse(openAIFromGemini(c.client).request(targetOf(c), MODEL).body) as {
      contents: unknown;
      tools: unknown;
      generationConfig: { responseJsonSchema: unknown };
    };
    const sdk = await sdkBody(geminiApi(), {
      model: 'gemini-2.5-flash',
      contents: ours.contents as never, // the parts themselves are compared through the converters below
      config: {
        maxOutputTokens: 4096,
        responseMimeType: 'application/json',
        responseJsonSchema: ours.generationConfig.responseJsonSchema,
        tools: [
          {
            functionDeclarations: [
              {
                name: 'get_weather',
                description: 'Current weather of a city',
                parametersJsonSchema: {
                  type: 'object',
                  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
                  required: ['city'],
                  additionalProperties: false,
                },
              },
              { name: 'get_time', parametersJsonSchema: { type: 'object', properties: { tz: { type: 'string' } } } },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_weather'] } },
      },
    });
    expect(ours).toEqual(sdk);
  });

  it('Anthropic client: media, thinking budget, topK, function responses with error (Vertex AI)', async () => {
    const c = caseOf(anthropic.request, 'a tool round trip');
    const ours = JSON.parse(anthropicFromGemini(c.client).request(targetOf({ target: { provider: 'vertex' } }), MODEL).body) as { contents: unknown };
    const sdk = await sdkBody(vertex(), {
      model: 'gemini-2.5-pro',
      contents: ours.contents as never,
      config: {
        maxOutputTokens: 300,
        tools: [
          {
            functionDeclarations: [
              {
                name: 'get_weather',
                description: 'Current weather of a city',
                parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
              },
              { name: 'screenshot', parametersJsonSchema: { type: 'object', properties: {} } },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_weather'] } },
      },
    });
    expect(ours).toEqual(sdk);
    const first = caseOf(anthropic.request, 'system blocks');
    const ours2 = JSON.parse(anthropicFromGemini(first.client).request(targetOf({ target: { provider: 'vertex' } }), MODEL).body) as unknown;
    const sdk2 = await sdkBody(vertex(), {
      model: 'gemini-2.5-pro',
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Salut.' }] },
        { role: 'user', parts: [{ text: 'Again' }] },
      ],
      config: {
        systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in French.' }] },
        maxOutputTokens: 1024,
        temperature: 0.3,
        topP: 0.9,
        topK: 40,
        stopSequences: ['END'],
        thinkingConfig: { thinkingBudget: 512 },
      },
    });
    expect(ours2).toEqual(sdk2);
  });

  it('the SDK sends our parts unchanged: inlineData, fileData, functionCall with id and signature, functionResponse', async () => {
    for (const [ai, golden, name, provider] of [
      [geminiApi(), openai, 'image, PDF and audio', 'gemini'],
      [vertex(), openai, 'images by https', 'vertex'],
      [geminiApi(), openai, 'tools, forced function', 'gemini'],
      [vertex(), anthropic, 'a tool round trip', 'vertex'],
    ] as const) {
      const c = caseOf(golden.request, name);
      const translate = golden === openai ? openAIFromGemini : anthropicFromGemini;
      const ours = JSON.parse(translate(c.client).request(targetOf({ target: { provider } }), MODEL).body) as { contents: unknown[] };
      const sdk = (await sdkBody(ai, { model: 'gemini-2.5-flash', contents: ours.contents as never })) as { contents: unknown[] };
      expect(sdk.contents).toEqual(ours.contents);
    }
  });
});

describe('embeddings: the bodies @google/genai sends for embedContent, and its answers read', () => {
  const tokens = (n: number): Usage => ({ inputTokens: n, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
  it.each([
    {
      name: 'the Gemini API: batchEmbedContents',
      ai: geminiApi,
      target: { provider: 'gemini', upstreamModel: 'gemini-embedding-001' },
      inputs: ['first text', 'second text'],
      answer: { embeddings: [{ values: [0, 0.5] }, { values: [1, 0.5] }] },
      usage: { ...tokens(0), inputMissing: true },
    },
    {
      name: 'Vertex AI, gemini-embedding-001: predict',
      ai: vertex,
      target: { provider: 'vertex', upstreamModel: 'gemini-embedding-001' },
      inputs: ['first text', 'second text'],
      answer: { predictions: [0, 1].map((i) => ({ embeddings: { values: [i, 0.5], statistics: { token_count: 2 + i, truncated: false } } })) },
      usage: tokens(5),
    },
    {
      name: 'Vertex AI, a later Gemini embedding model: embedContent, one input',
      ai: vertex,
      target: { provider: 'vertex', upstreamModel: 'gemini-embedding-2-preview' },
      inputs: ['only text'],
      answer: { embedding: { values: [0.25, 0.5] }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } },
      usage: tokens(3),
    },
  ] as const)('$name', async (c) => {
    const target = { ...targetOf({ target: { provider: c.target.provider } }), upstreamModel: c.target.upstreamModel };
    const client = { model: 'public-model', input: [...c.inputs], dimensions: 256 };
    const req = openAIEmbeddingsFromGemini(client).request(target, MODEL);
    reply = { sse: false, text: JSON.stringify(c.answer) };
    const r = await c.ai().models.embedContent({ model: c.target.upstreamModel, contents: [...c.inputs], config: { outputDimensionality: 256 } });
    expect(JSON.parse(req.body)).toEqual(seen?.body);
    expect(req.operation).toBe('embeddings');
    expect(seen?.url).toMatch(new RegExp(`/models/${c.target.upstreamModel}:${geminiEmbedMethod(target)}$`));
    const out = openAIEmbeddingsFromGemini(client).response(JSON.stringify(c.answer), 'public-model');
    const body = JSON.parse(out.body) as { data: Array<{ embedding: number[] }> };
    expectConforms('CreateEmbeddingResponse', body);
    expect(body.data.map((d) => d.embedding)).toEqual(r.embeddings?.map((e) => e.values));
    expect(out.usage).toEqual(c.usage);
  });

  it('base64 vectors are the little-endian float32 bytes OpenAI sends; token ids and a second input to a one-input model are refused', () => {
    const out = openAIEmbeddingsFromGemini({ input: 'x', encoding_format: 'base64' }).response(JSON.stringify({ embeddings: [{ values: [1, -0.5] }] }), 'm');
    const b64 = (JSON.parse(out.body) as { data: Array<{ embedding: string }> }).data[0]!.embedding;
    expect(Array.from(new Float32Array(new Uint8Array(Buffer.from(b64, 'base64')).buffer))).toEqual([1, -0.5]);
    expect(() => openAIEmbeddingsFromGemini({ input: [[1, 2]] }).request(targetOf({}), MODEL)).toThrow(/^input: token ids/);
    const v2 = { ...targetOf({ target: { provider: 'vertex' } }), upstreamModel: 'gemini-embedding-2-preview' };
    expect(() => openAIEmbeddingsFromGemini({ input: ['a', 'b'] }).request(v2, MODEL)).toThrow(/^input: several inputs/);
  });
});

describe("count_tokens: Gemini's countTokens", () => {
  const client = {
    model: 'public-model',
    system: 'Be brief.',
    tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
  };

  it('Vertex AI: the body @google/genai sends for countTokens, and its answer', async () => {
    const req = anthropicCountTokensFromGemini(client).request(targetOf({ target: { provider: 'vertex' } }), MODEL);
    reply = { sse: false, text: JSON.stringify({ totalTokens: 31, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 31 }] }) };
    const r = await vertex().models.countTokens({
      model: 'gemini-2.5-flash',
      contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
      config: {
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }],
      },
    });
    expect(req.operation).toBe('count_tokens');
    expect(JSON.parse(req.body)).toEqual(seen?.body);
    expect(seen?.url).toMatch(/\/models\/gemini-2\.5-flash:countTokens$/);
    const out = anthropicCountTokensFromGemini(client).response(reply.text, 'public-model');
    expect(JSON.parse(out.body)).toEqual({ input_tokens: r.totalTokens });
    expect(out.usage).toEqual(NO_USAGE); // free, as Anthropic's own count_tokens is
  });

  it('the Gemini API: system prompt and tools counted inside generateContentRequest; an answer without a count falls back to the estimate', () => {
    const req = anthropicCountTokensFromGemini(client).request(targetOf({}), MODEL);
    expect(JSON.parse(req.body)).toEqual({
      generateContentRequest: {
        model: 'models/gemini-2.5-flash',
        contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }],
        generationConfig: { maxOutputTokens: 4096 },
      },
    });
    expect(JSON.parse(anthropicCountTokensFromGemini(client).response('{}', 'm').body)).toEqual({ input_tokens: estimateInputTokens(client) });
    expect(() => anthropicCountTokensFromGemini({ ...client, mcp_servers: [{}] }).request(targetOf({}), MODEL)).toThrow(/^mcp_servers:/);
  });
});

describe('@google/genai parses the golden answers as the translators read them', () => {
  it.each(openai.response)('$name', async (c) => {
    reply = { sse: false, text: JSON.stringify(c.upstream) };
    const r = await geminiApi().models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' });
    const ours = JSON.parse(openAIFromGemini({}).response(JSON.stringify(c.upstream), 'm').body) as {
      choices: Array<{ message: { content: string | null; tool_calls?: Array<{ function: { name: string; arguments: string } }> } }>;
    };
    const message = ours.choices[0]!.message;
    expect(r.text ?? '').toBe(message.content ?? '');
    expect((r.functionCalls ?? []).map((f) => ({ name: f.name, arguments: JSON.stringify(f.args) }))).toEqual(
      (message.tool_calls ?? []).map((t) => t.function),
    );
  });

  it.each(openai.stream.filter((s) => !s.name.startsWith('an error')))('stream: $name', async (c) => {
    reply = { sse: true, text: c.upstream.map((u) => `data: ${String(u)}\r\n\r\n`).join('') };
    let text = '';
    let finish: FinishReason | undefined;
    for await (const chunk of await geminiApi().models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' })) {
      text += chunk.text ?? '';
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
    }
    expect(seen?.url).toMatch(/\/models\/gemini-2\.5-flash:streamGenerateContent\?alt=sse$/);
    const ours = (c.expected as { events: Array<{ data: { choices?: Array<{ delta: { content?: string }; finish_reason: string | null }> } }> }).events;
    const deltas = ours.flatMap((e) => (typeof e.data === 'object' ? (e.data.choices ?? []) : []));
    expect(text).toBe(deltas.map((d) => d.delta.content ?? '').join(''));
    if (!c.name.startsWith('cut') && !c.name.startsWith('a blocked')) expect(finish).toBeDefined();
  });
});
