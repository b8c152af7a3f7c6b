// count_tokens for an Anthropic client whose model an OpenAI-protocol or Bedrock Converse upstream serves: neither
// has such an endpoint, so the gateway answers itself with an estimate (about 4 characters per token, a fixed cost per
// message and per image). It is free, as Anthropic's own count_tokens is.
import { anthropicErrorMessage } from './anthropic/anthropic-usage.ts';
import { isObject, type Json } from './json-read.ts';
import type { Protocol } from '../providers/types.ts';
import { NO_USAGE, type StreamTranslator, type Translation, type UpstreamRequest } from './types.ts';

const PER_MESSAGE = 4;
const PER_IMAGE = 1600; // Anthropic's estimate for a ~1.2 megapixel image (width * height / 750)

function walk(v: unknown, acc: { chars: number; images: number }): void {
  if (typeof v === 'string') acc.chars += v.length;
  else if (Array.isArray(v)) for (const x of v) walk(x, acc);
  else if (isObject(v)) {
    if (v.type === 'image') {
      acc.images++;
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      if (k !== 'cache_control' && k !== 'type') walk(x, acc);
    }
  }
}

export function estimateInputTokens(client: Json): number {
  const acc = { chars: 0, images: 0 };
  walk(client.system, acc);
  walk(client.messages, acc);
  walk(client.tools, acc);
  const messages = Array.isArray(client.messages) ? client.messages.length : 0;
  return Math.max(1, Math.ceil(acc.chars / 4) + messages * PER_MESSAGE + acc.images * PER_IMAGE);
}

export function anthropicCountTokensEstimate(client: Json, protocol: Protocol = 'openai'): Translation {
  return {
    dialect: 'anthropic',
    protocol,
    request(): UpstreamRequest {
      return { operation: 'count_tokens', body: '', stream: false, headers: {}, local: JSON.stringify({ input_tokens: estimateInputTokens(client) }) };
    },
    response: (body: string) => ({ body, usage: NO_USAGE }),
    stream(): StreamTranslator {
      throw new Error('count_tokens does not stream');
    },
    errorMessage: anthropicErrorMessage,
  };
}
