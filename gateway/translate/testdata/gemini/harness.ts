// Helpers of the Gemini translator tests: the target of a case (the Gemini API unless the case says Vertex AI),
// deep-frozen client bodies (a translator that writes to one throws), and the official SDKs' stream accumulators
// fed with a translated stream as if it came over HTTP.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { CompiledTarget } from '../../../contract/snapshot.ts';
import { TARGET } from '../golden.ts';

export function targetOf(c: object): CompiledTarget {
  const provider = (c as { target?: { provider?: string } }).target?.provider === 'vertex' ? 'vertex' : 'gemini';
  return { ...TARGET, provider, upstreamModel: 'gemini-2.5-flash' } as CompiledTarget;
}

export function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

function sseFetch(text: string): typeof fetch {
  return () => Promise.resolve(new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } }));
}

/** The completion the openai SDK's ChatCompletionStream accumulates from the stream text. */
export async function openAIAccumulated(text: string): Promise<OpenAI.Chat.Completions.ChatCompletion> {
  const client = new OpenAI({ apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1', fetch: sseFetch(text), maxRetries: 0 });
  return client.chat.completions.stream({ model: 'public-model', messages: [{ role: 'user', content: 'hi' }] }).finalChatCompletion();
}

/** The message the @anthropic-ai/sdk MessageStream accumulates from the stream text. */
export async function anthropicAccumulated(text: string): Promise<Anthropic.Message> {
  const client = new Anthropic({ apiKey: 'k', baseURL: 'http://127.0.0.1:9', fetch: sseFetch(text), maxRetries: 0 });
  return client.messages.stream({ model: 'public-model', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
}

/** The response the openai SDK's ResponseStream accumulates from the stream text. */
export async function responsesAccumulated(text: string): Promise<OpenAI.Responses.Response> {
  const client = new OpenAI({ apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1', fetch: sseFetch(text), maxRetries: 0 });
  return client.responses.stream({ model: 'public-model', input: 'hi' }).finalResponse();
}
