// OpenAI client -> OpenAI-protocol upstream, legacy text completions (/v1/completions: vLLM, DeepSeek, Mistral's FIM,
// Together, Fireworks): a pass-through like chat's. The output cap the hold assumed goes upstream as max_tokens, usage
// is forced on streams, and a `suffix` (fill-in-the-middle) reaches only a model whose route says it completes FIM.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { GatewayError } from '../../errors/catalog.ts';
import { scanFacts } from '../answer-facts.ts';
import { rewriteModel, usageOf } from '../json-splice.ts';
import { OpenAIPassThroughStream, upstreamChatBody } from './openai-openai.ts';
import { fromOpenAIUsage, openAIErrorMessage } from './openai-usage.ts';
import type { Translation, UpstreamRequest } from '../types.ts';

type Body = Record<string, unknown>;
type OpenAIUsage = Parameters<typeof fromOpenAIUsage>[0];

/** A suffix asks for fill-in-the-middle when it is not empty (OpenAI's default is null; "" adds nothing). */
export function asksFim(client: Body): boolean {
  return typeof client.suffix === 'string' && client.suffix !== '';
}

export function openAICompletionsPassThrough(client: Body): Translation {
  const wantsUsage = (client.stream_options as Body | undefined)?.include_usage === true;
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      if (asksFim(client) && model.fim !== true) {
        throw new GatewayError(
          'invalid_request',
          `The model ${model.id} does not complete fill-in-the-middle: a suffix needs a completions model whose route sets fim.`,
          { param: 'suffix' },
        );
      }
      const body = upstreamChatBody(client, target.upstreamModel);
      // Legacy completions read max_tokens only: the held cap, the model's maxOutputTokens when the call gives none
      // (OpenAI's default of 16 would otherwise differ between upstreams).
      body.max_tokens = typeof client.max_tokens === 'number' ? client.max_tokens : model.maxOutputTokens;
      return { operation: 'completions', body: JSON.stringify(body), stream: client.stream === true, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      return { body: rewriteModel(upstreamBody, servedModel), usage: fromOpenAIUsage(usageOf<OpenAIUsage>(upstreamBody)) };
    },
    factsOf: (body: string) => scanFacts(body, 'finish_reason'),
    stream: (servedModel: string, watch?: boolean) => new OpenAIPassThroughStream(servedModel, wantsUsage, watch === true),
    errorMessage: openAIErrorMessage,
  };
}
