// OpenAI embeddings client -> Bedrock embedding models through InvokeModel: Amazon Titan Text Embeddings
// (`amazon.titan-embed-text-v2:0`, one text per request, `inputText`, optional `dimensions`) and Cohere Embed
// (`cohere.embed-*`, a batch of `texts`). Answers become OpenAI's list of embeddings, as floats or base64 of float32
// as the client asked (the openai SDK asks base64 by default). Usage: Titan's inputTextTokenCount; for Cohere the
// provider copies Bedrock's x-amzn-bedrock-input-token-count header into the body under the same name.
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { invalid, isObject, parseUpstream, type Json } from '../json-read.ts';
import { NO_USAGE, safeJson, tokenCount, type StreamTranslator, type Translation, type UpstreamRequest, type Usage } from '../types.ts';

const TITAN_DIMENSIONS = new Set([256, 512, 1024]);

function texts(client: Json): string[] {
  const input = client.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'string')) return input as string[];
  throw invalid('input', 'Bedrock embedding models take a string or an array of strings (token arrays are not supported)');
}

function titanBody(client: Json, target: CompiledTarget): Json {
  const list = texts(client);
  if (list.length > 1) throw invalid('input', `${target.upstreamModel} embeds one text per request: send a string, not an array of ${list.length}`);
  const out: Json = { inputText: list[0] };
  if (client.dimensions !== undefined) {
    if (!target.upstreamModel.includes('titan-embed-text-v2')) throw invalid('dimensions', `${target.upstreamModel} has a fixed number of dimensions`);
    if (typeof client.dimensions !== 'number' || !TITAN_DIMENSIONS.has(client.dimensions))
      throw invalid('dimensions', 'Titan Text Embeddings V2 takes 256, 512 or 1024');
    out.dimensions = client.dimensions;
  }
  if (target.upstreamModel.includes('titan-embed-text-v2')) out.normalize = true;
  return out;
}

function cohereBody(client: Json): Json {
  if (client.dimensions !== undefined) throw invalid('dimensions', 'Cohere Embed on Bedrock has a fixed number of dimensions');
  return { texts: texts(client), input_type: 'search_document' };
}

function encode(vector: number[], format: unknown): number[] | string {
  if (format !== 'base64') return vector;
  const f = Float32Array.from(vector);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
}

function vectors(upstream: Json): number[][] {
  if (Array.isArray(upstream.embedding)) return [upstream.embedding as number[]];
  const e = upstream.embeddings;
  if (Array.isArray(e)) return e as number[][];
  // Cohere with embedding_types answers {embeddings: {float: [...]}}.
  if (isObject(e) && Array.isArray(e.float)) return e.float as number[][];
  return [];
}

export function openAIBedrockEmbeddings(client: Json): Translation {
  return {
    dialect: 'openai',
    protocol: 'converse',
    request(target: CompiledTarget): UpstreamRequest {
      const m = target.upstreamModel;
      const cohere = /(?:^|[./:])cohere\.embed/.test(m);
      if (!cohere && !/(?:^|[./:])amazon\.titan-embed/.test(m)) {
        throw invalid('model', `${m} is not a Bedrock embedding model this gateway can call (amazon.titan-embed-*, cohere.embed-*)`);
      }
      const body = cohere ? cohereBody(client) : titanBody(client, target);
      return { operation: 'embeddings', body: JSON.stringify(body), stream: false, headers: {} };
    },
    response(upstreamBody: string, servedModel: string): { body: string; usage: Usage } {
      const upstream = parseUpstream(upstreamBody);
      const n = tokenCount(upstream.inputTextTokenCount);
      const usage: Usage = { ...NO_USAGE, inputTokens: n ?? 0, ...(n === null ? { inputMissing: true } : {}) };
      const data = vectors(upstream).map((v, index) => ({ object: 'embedding', index, embedding: encode(v, client.encoding_format) }));
      const body = { object: 'list', data, model: servedModel, usage: { prompt_tokens: usage.inputTokens, total_tokens: usage.inputTokens } };
      return { body: JSON.stringify(body), usage };
    },
    stream(): StreamTranslator {
      throw new Error('embeddings do not stream');
    },
    errorMessage(body: string, status: number): string {
      const m = (safeJson(body) as { message?: unknown } | undefined)?.message;
      return typeof m === 'string' ? `upstream answered ${status}: ${m.slice(0, 500)}` : `upstream answered ${status}`;
    },
  };
}
