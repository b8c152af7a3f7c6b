// OpenAI client -> OpenAI-protocol upstream, moderations (/v1/moderations, text and image inputs): a pass-through
// apart from the model name. Moderation upstreams report no usage: the call's input is counted as settle.ts
// estimates any unreported input (a quarter of the request body's bytes), at the route's input price (0: free).
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { rewriteModel } from '../json-splice.ts';
import { openAIErrorMessage } from './openai-usage.ts';
import { NO_USAGE, type StreamTranslator, type Translation, type UpstreamRequest } from '../types.ts';

type Body = Record<string, unknown>;

export function moderationsPassThrough(client: Body): Translation {
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget): UpstreamRequest {
      const { metadata: _m, ...rest } = client;
      return { operation: 'moderations', body: JSON.stringify({ ...rest, model: target.upstreamModel }), stream: false, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      return { body: rewriteModel(upstreamBody, servedModel), usage: { ...NO_USAGE, inputMissing: true } };
    },
    stream(): StreamTranslator {
      throw new Error('moderations do not stream');
    },
    errorMessage: openAIErrorMessage,
  };
}
