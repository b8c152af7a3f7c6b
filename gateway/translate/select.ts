// Which translator serves a call: one exhaustive switch per client operation over the upstream protocols
// (as envoyproxy/ai-gateway chooses its per-pair translators). Each is built per request from the parsed body.
import { GatewayError } from '../errors/catalog.ts';
import type { Protocol } from '../providers/types.ts';
import { anthropicCountTokensPassThrough, anthropicMessagesPassThrough, type AnthropicHeaders } from './anthropic/anthropic-anthropic.ts';
import { anthropicFromConverse } from './anthropic/anthropic-converse.ts';
import { anthropicFromGemini } from './anthropic/anthropic-gemini.ts';
import { anthropicCountTokensFromGemini } from './anthropic/anthropic-gemini-count.ts';
import { anthropicFromOpenAI } from './anthropic/anthropic-openai.ts';
import { openAIBedrockEmbeddings } from './openai/openai-bedrock-embeddings.ts';
import { anthropicCountTokensEstimate } from './count-tokens.ts';
import type { Json } from './json-read.ts';
import { openAIFromAnthropic } from './openai/openai-anthropic.ts';
import { openAIFromConverse } from './openai/openai-converse.ts';
import { openAIChatPassThrough, openAIEmbeddingsPassThrough } from './openai/openai-openai.ts';
import { openAICompletionsPassThrough } from './openai/openai-completions.ts';
import { moderationsPassThrough } from './openai/openai-moderations.ts';
import { imagenFromOpenAI } from './openai/openai-imagen.ts';
import { bedrockImagesFromOpenAI } from './openai/openai-bedrock-images.ts';
import { bedrockImageEditsFromOpenAI } from './openai/openai-bedrock-image-edits.ts';
import { imagenEditsFromOpenAI } from './openai/openai-imagen-edits.ts';
import { imageEditsPassThrough, imagesPassThrough, type ImageEditForm } from './openai/openai-images.ts';
import { rerankPassThrough } from './openai/openai-rerank.ts';
import { rerankFromBedrock } from './openai/openai-rerank-bedrock.ts';
import { responsesFromAnthropic } from './responses/responses-anthropic.ts';
import { responsesFromConverse } from './responses/responses-converse.ts';
import { openAIFromGemini } from './openai/openai-gemini.ts';
import { openAIEmbeddingsFromGemini } from './openai/openai-gemini-embeddings.ts';
import { responsesFromGemini } from './responses/responses-gemini.ts';
import { responsesFromOpenAI } from './responses/responses-openai.ts';
import type { Translation } from './types.ts';

export type TranslationFor = (protocol: Protocol) => Translation;

function unreachable(p: never): never {
  throw new Error(`unknown protocol ${String(p)}`);
}

/** POST /v1/chat/completions. */
export function chatTranslation(body: Json, raw?: Buffer): TranslationFor {
  return (p) => {
    switch (p) {
      case 'openai':
        return openAIChatPassThrough(body, raw);
      case 'anthropic':
        return openAIFromAnthropic(body);
      case 'converse':
        return openAIFromConverse(body);
      case 'gemini':
        return openAIFromGemini(body);
      default:
        return unreachable(p);
    }
  };
}

/** POST /v1/responses: passed through to targets with responsesApi, translated for the others. */
export function responsesTranslation(body: Json): TranslationFor {
  return (p) => {
    switch (p) {
      case 'openai':
        return responsesFromOpenAI(body);
      case 'anthropic':
        return responsesFromAnthropic(body);
      case 'converse':
        return responsesFromConverse(body);
      case 'gemini':
        return responsesFromGemini(body);
      default:
        return unreachable(p);
    }
  };
}

/** POST /v1/embeddings: Anthropic has no embeddings API, so a route pointing there is a configuration error. */
export function embeddingsTranslation(body: Json): TranslationFor {
  return (p) => {
    switch (p) {
      case 'openai':
        return openAIEmbeddingsPassThrough(body);
      case 'anthropic':
        throw new GatewayError('upstream_error', 'This embeddings model is routed to an Anthropic upstream, which has no embeddings API.');
      case 'converse':
        return openAIBedrockEmbeddings(body);
      case 'gemini':
        return openAIEmbeddingsFromGemini(body);
      default:
        return unreachable(p);
    }
  };
}

/** What only an OpenAI-compatible upstream serves: a route of this type pointing elsewhere is a configuration error. */
function openAIOnly(what: string, p: Protocol): never {
  throw new GatewayError('upstream_error', `This ${what} model is routed to an upstream of the ${p} protocol, which has no ${what} API.`);
}

/** POST /v1/completions (legacy text completions, fill-in-the-middle). */
export function completionsTranslation(body: Json): TranslationFor {
  return (p) => {
    switch (p) {
      case 'openai':
        return openAICompletionsPassThrough(body);
      case 'anthropic':
      case 'converse':
      case 'gemini':
        return openAIOnly('completions', p);
      default:
        return unreachable(p);
    }
  };
}

/** POST /v1/rerank and /cohere/v2/rerank: OpenAI-compatible rerank upstreams (Cohere, Jina, vLLM, Voyage) and Bedrock's. */
export function rerankTranslation(body: Json): TranslationFor {
  return (p) => {
    switch (p) {
      case 'openai':
        return rerankPassThrough(body);
      case 'converse':
        // Bedrock's models other than Claude: its rerank models through the Agent Runtime Rerank API.
        return rerankFromBedrock(body);
      case 'anthropic':
      case 'gemini':
        return openAIOnly('rerank', p);
      default:
        return unreachable(p);
    }
  };
}

/** POST /v1/moderations. */
export function moderationsTranslation(body: Json): TranslationFor {
  return (p) => {
    switch (p) {
      case 'openai':
        return moderationsPassThrough(body);
      case 'anthropic':
      case 'converse':
      case 'gemini':
        return openAIOnly('moderation', p);
      default:
        return unreachable(p);
    }
  };
}

/** POST /v1/images/generations. */
export function imagesTranslation(body: Json, n: number): TranslationFor {
  return (p) => {
    switch (p) {
      case 'openai':
        return imagesPassThrough(body, n);
      case 'gemini':
        return imagenFromOpenAI(body, n);
      case 'converse':
        return bedrockImagesFromOpenAI(body, n);
      case 'anthropic':
        return openAIOnly('image', p);
      default:
        return unreachable(p);
    }
  };
}

/** POST /v1/images/edits. */
export function imageEditsTranslation(form: ImageEditForm, n: number): TranslationFor {
  return (p) => {
    switch (p) {
      case 'openai':
        return imageEditsPassThrough(form, n);
      case 'gemini':
        return imagenEditsFromOpenAI(form, n);
      case 'converse':
        return bedrockImageEditsFromOpenAI(form, n);
      case 'anthropic':
        return openAIOnly('image edit', p);
      default:
        return unreachable(p);
    }
  };
}

/** POST /anthropic/v1/messages. */
export function messagesTranslation(body: Json, headers: AnthropicHeaders): TranslationFor {
  return (p) => {
    switch (p) {
      case 'anthropic':
        return anthropicMessagesPassThrough(body, headers);
      case 'openai':
        return anthropicFromOpenAI(body);
      case 'converse':
        return anthropicFromConverse(body);
      case 'gemini':
        return anthropicFromGemini(body);
      default:
        return unreachable(p);
    }
  };
}

/** POST /anthropic/v1/messages/count_tokens. */
export function countTokensTranslation(body: Json, headers: AnthropicHeaders): TranslationFor {
  return (p) => {
    switch (p) {
      case 'anthropic':
        return anthropicCountTokensPassThrough(body, headers);
      case 'openai':
        return anthropicCountTokensEstimate(body);
      case 'converse':
        return anthropicCountTokensEstimate(body, p);
      case 'gemini':
        return anthropicCountTokensFromGemini(body);
      default:
        return unreachable(p);
    }
  };
}
