// Manifests and clients of the response cache tests: a fake OpenAI upstream (every call it gets is recorded) whose
// answer echoes the prompt, routes with and without spec.cache, two accounts.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { z } from 'zod';
import type { modelRouteSpec } from '../../crds/schema/index.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import type { RecordedCall } from '../fakes/recording-server.ts';

export type CacheSpec = z.input<typeof modelRouteSpec>['cache'];

export function lastUserText(call: RecordedCall): string {
  const msgs = (call.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...msgs].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}

/** The fake's answer echoes the prompt; its usage: 1 input token per 4 characters of it, 5 output tokens. */
export async function echoUpstream(): Promise<FakeUpstream> {
  const up = await startFakeUpstream('cache-fake');
  up.fallback = (call) => {
    const said = lastUserText(call);
    return { kind: 'reply', content: `echo: ${said}`, usage: { prompt_tokens: Math.max(1, Math.ceil(said.length / 4)), completion_tokens: 5 } };
  };
  return up;
}

export function cachedRoute(name: string, up: FakeUpstream, cache: CacheSpec): object {
  return route(name, [{ name: `${name}-t`, provider: 'openai', baseUrl: up.baseUrl, upstreamModel: `up-${name}` }], cache === undefined ? {} : { cache });
}

export interface CacheSetup {
  docs: object[];
  keys: { a1: string; a2: string; b1: string };
}

/** Account acme (keys a1, a2) and account globex (key b1), both on a Builder plan, and the given routes. */
export function cacheSetup(routes: object[], acme: Record<string, unknown> = { trialCreditUsd: 100 }, keySpec: Record<string, unknown> = {}): CacheSetup {
  const a1 = apiKey('a1', 'acme', keySpec);
  const a2 = apiKey('a2', 'acme');
  const b1 = apiKey('b1', 'globex');
  return {
    keys: { a1: a1.key, a2: a2.key, b1: b1.key },
    docs: [
      plan('builder', { tier: 2, anthropicEndpoint: true }),
      account('acme', 'builder', acme),
      account('globex', 'builder', { trialCreditUsd: 100 }),
      ...a1.docs,
      ...a2.docs,
      ...b1.docs,
      ...routes,
    ],
  };
}

export function openai(url: string, key: string): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
}

export function anthropic(url: string, key: string): Anthropic {
  return new Anthropic({ baseURL: `${url}/anthropic`, apiKey: key, authToken: null, maxRetries: 0 });
}

/** Calls the fake got for chat (not probes). */
export function upstreamCalls(up: FakeUpstream, text: string): number {
  return up.calls.filter((c) => c.path.endsWith('/chat/completions') && lastUserText(c) === text).length;
}

/** A raw chat call: status, headers and body text. */
export async function rawChat(
  url: string,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
