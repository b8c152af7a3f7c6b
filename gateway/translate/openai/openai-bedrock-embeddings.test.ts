import { describe, expect, it } from 'vitest';
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { openAIBedrockEmbeddings } from './openai-bedrock-embeddings.ts';

const target = (upstreamModel: string): CompiledTarget => ({ upstreamModel }) as CompiledTarget;
const model = {} as CompiledModel;

describe('OpenAI embeddings → Bedrock Titan and Cohere', () => {
  it('builds Titan’s and Cohere’s bodies without touching the client’s', () => {
    const client = { model: 'e', input: 'hello world', dimensions: 512 };
    const copy = structuredClone(client);
    expect(JSON.parse(openAIBedrockEmbeddings(client).request(target('amazon.titan-embed-text-v2:0'), model).body)).toEqual({
      inputText: 'hello world',
      dimensions: 512,
      normalize: true,
    });
    expect(client).toEqual(copy);
    expect(JSON.parse(openAIBedrockEmbeddings({ input: ['a', 'b'] }).request(target('cohere.embed-multilingual-v3'), model).body)).toEqual({
      texts: ['a', 'b'],
      input_type: 'search_document',
    });
  });

  it('refuses what the model cannot take, naming the field', () => {
    expect(() => openAIBedrockEmbeddings({ input: ['a', 'b'] }).request(target('amazon.titan-embed-text-v2:0'), model)).toThrow(/input/);
    expect(() => openAIBedrockEmbeddings({ input: 'a', dimensions: 100 }).request(target('amazon.titan-embed-text-v2:0'), model)).toThrow(/dimensions/);
    expect(() => openAIBedrockEmbeddings({ input: [1, 2] }).request(target('cohere.embed-english-v3'), model)).toThrow(/input/);
    expect(() => openAIBedrockEmbeddings({ input: 'a' }).request(target('meta.llama3-1-8b-instruct-v1:0'), model)).toThrow(/model/);
  });

  it('answers OpenAI’s list with Bedrock’s token count, floats or base64 float32', () => {
    const t = openAIBedrockEmbeddings({ input: 'x', encoding_format: 'base64' });
    const { body, usage } = t.response(JSON.stringify({ embedding: [0.5, -1], inputTextTokenCount: 4 }), 'served');
    const parsed = JSON.parse(body) as { data: Array<{ embedding: string }>; model: string; usage: object };
    const bytes = Uint8Array.from(Buffer.from(parsed.data[0]!.embedding, 'base64'));
    expect([...new Float32Array(bytes.buffer)]).toEqual([0.5, -1]);
    expect(parsed).toMatchObject({ model: 'served', usage: { prompt_tokens: 4, total_tokens: 4 } });
    expect(usage.inputTokens).toBe(4);
    const missing = openAIBedrockEmbeddings({ input: ['a'] }).response(JSON.stringify({ embeddings: [[1]] }), 's');
    expect(missing.usage.inputMissing).toBe(true);
  });
});
