// OpenAI embeddings client -> Google's embedding methods, which are not generateContent (gemini-embed-method.ts picks
// one per target; the provider builds its URL): the Gemini API's batchEmbedContents (`{requests: [{model:
// "models/<id>", content, outputDimensionality}]}`: each request names the model, as that method requires), Vertex
// AI's embedContent (`{content, embedContentConfig: {outputDimensionality}}`, one input) and predict (`{instances:
// [{content}], parameters: {outputDimensionality}}`); the bodies are the ones @google/genai sends. Answers
// (`{embeddings: [{values}]}`, `{embedding: {values}}`, `{predictions: [{embeddings: {values, statistics:
// {token_count}}}]}`) -> an OpenAI list; the input tokens are what Google reports (usageMetadata.promptTokenCount,
// or the sum of Vertex's token_count), flagged missing when it reports none (the gateway bills its estimate).
// encoding_format base64 is produced here (little-endian float32, as OpenAI encodes it). Refused: inputs as token
// ids (Google takes text), several inputs for a one-input method. Dropped: user.
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { geminiErrorMessage } from '../gemini/gemini-usage.ts';
import { invalid, isObject, parseUpstream, unsupported, type Json } from '../json-read.ts';
import { geminiEmbedMethod } from '../gemini/gemini-embed-method.ts';
import { NO_GEMINI } from '../gemini/gemini-request.ts';
import { tokenCount, type StreamTranslator, type Translation, type UpstreamRequest, type Usage } from '../types.ts';

function inputsOf(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'string')) return input as string[];
  if (Array.isArray(input) && input.length > 0) throw unsupported('input', `token ids ${NO_GEMINI}: send text`);
  throw invalid('input', 'must be a string or a non-empty array of strings');
}

function base64Of(values: number[]): string {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

/** The vectors and the input token count (null when not reported) of either answer. */
function vectorsOf(r: Json): { vectors: number[][]; tokens: number | null } {
  const values = (v: unknown): number[] => (isObject(v) && Array.isArray(v.values) ? v.values.filter((x): x is number => typeof x === 'number') : []);
  if (Array.isArray(r.predictions)) {
    let tokens: number | null = 0;
    const vectors = r.predictions.map((p) => {
      const e = isObject(p) && isObject(p.embeddings) ? p.embeddings : {};
      const n = tokenCount(isObject(e.statistics) ? e.statistics.token_count : undefined);
      tokens = tokens === null || n === null ? null : tokens + n;
      return values(e);
    });
    return { vectors, tokens };
  }
  const list = Array.isArray(r.embeddings) ? r.embeddings : isObject(r.embedding) ? [r.embedding] : [];
  const meta = isObject(r.usageMetadata) ? r.usageMetadata : {};
  return { vectors: list.map(values), tokens: tokenCount(meta.promptTokenCount) };
}

function bodyOf(target: CompiledTarget, inputs: string[], dims: Json): Json {
  const content = (text: string): Json => ({ role: 'user', parts: [{ text }] });
  switch (geminiEmbedMethod(target)) {
    case 'batchEmbedContents':
      return { requests: inputs.map((text) => ({ model: `models/${target.upstreamModel}`, content: content(text), ...dims })) };
    case 'embedContent':
      if (inputs.length > 1)
        throw unsupported('input', `several inputs in one request ${NO_GEMINI} (${target.upstreamModel} on Vertex AI embeds one input per request)`);
      return { content: content(inputs[0]!), ...(Object.keys(dims).length > 0 ? { embedContentConfig: dims } : {}) };
    case 'predict':
      return { instances: inputs.map((text) => ({ content: text })), ...(Object.keys(dims).length > 0 ? { parameters: dims } : {}) };
  }
}

export function openAIEmbeddingsFromGemini(client: Json): Translation {
  const base64 = client.encoding_format === 'base64';
  return {
    dialect: 'openai',
    protocol: 'gemini',
    request(target: CompiledTarget): UpstreamRequest {
      const inputs = inputsOf(client.input);
      const dims = typeof client.dimensions === 'number' ? { outputDimensionality: client.dimensions } : {};
      const body = bodyOf(target, inputs, dims);
      return { operation: 'embeddings', body: JSON.stringify(body), stream: false, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      const { vectors, tokens } = vectorsOf(parseUpstream(upstreamBody));
      const usage: Usage = {
        inputTokens: tokens ?? 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        ...(tokens === null ? { inputMissing: true } : {}),
      };
      const data = vectors.map((v, index) => ({ object: 'embedding', index, embedding: base64 ? base64Of(v) : v }));
      const body = { object: 'list', data, model: servedModel, usage: { prompt_tokens: usage.inputTokens, total_tokens: usage.inputTokens } };
      return { body: JSON.stringify(body), usage };
    },
    stream(): StreamTranslator {
      throw new Error('embeddings do not stream');
    },
    errorMessage: geminiErrorMessage,
  };
}
