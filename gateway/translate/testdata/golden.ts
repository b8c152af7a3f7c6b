// Golden files of the translator tests: each case holds a recorded wire sample and the expected translation.
// Run with UPDATE_GOLDEN=1 to rewrite the expectations from the current code, then review the diff.
import { readFileSync, writeFileSync } from 'node:fs';
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { GatewayError } from '../../errors/catalog.ts';
import { SseParser, type SseEvent } from '../../sse/parser.ts';
import type { StreamTranslator, Translation, UpstreamRequest } from '../types.ts';
import { expect } from 'vitest';

export const UPDATE = process.env.UPDATE_GOLDEN === '1';

export interface Golden {
  request: Array<{ name: string; client: Record<string, unknown>; headers?: Record<string, string>; expected?: unknown }>;
  refuse: Array<{ name: string; client: Record<string, unknown>; expected?: unknown }>;
  response: Array<{ name: string; upstream: unknown; expected?: unknown }>;
  stream: Array<{ name: string; client?: Record<string, unknown>; upstream: Array<string | { event: string; data: unknown }>; expected?: unknown }>;
}

export function loadGolden(name: string): { data: Golden; save: () => void } {
  const file = new URL(`./${name}.json`, import.meta.url);
  const data = JSON.parse(readFileSync(file, 'utf8')) as Golden;
  return { data, save: () => writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`) };
}

export const TARGET: CompiledTarget = {
  name: 't', provider: 'openai', baseUrl: 'http://upstream.test', upstreamModel: 'upstream-model', credential: { kind: 'none' }, weight: 1,
  timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 1000, totalMs: 1000 }, mock: null,
};

export const MODEL: CompiledModel = {
  id: 'public-model', type: 'chat', minTier: 0, inputNanoPerToken: 1, outputNanoPerToken: 1, maxOutputTokens: 4096, targets: [TARGET], fallbacks: [],
};

/** Upstream samples as the SSE events the parser yields. */
export function upstreamEvents(list: Golden['stream'][number]['upstream']): SseEvent[] {
  return list.map((e) => (typeof e === 'string' ? { event: undefined, data: e } : { event: e.event, data: JSON.stringify(e.data) }));
}

/** The client-facing stream text as comparable events: data parsed as JSON where it is JSON. */
export function clientEvents(text: string): Array<{ event?: string; data: unknown }> {
  const events = new SseParser().push(text);
  return events.map((e) => {
    let data: unknown = e.data;
    try { data = JSON.parse(e.data); } catch { /* [DONE] */ }
    return e.event === undefined ? { data } : { event: e.event, data };
  });
}

/** What a refused request throws, as the golden files record it; fails unless it is a GatewayError. */
export function refusal(translate: () => unknown): { code: string; status: number; message: string } {
  try {
    translate();
  } catch (e) {
    if (e instanceof GatewayError) return { code: e.code, status: e.status, message: e.message };
    throw e;
  }
  throw new Error('expected the request to be refused');
}

/** A request as the golden files record it: operation, stream flag, headers and the body parsed. */
export function wire(req: UpstreamRequest): { operation: string; stream: boolean; headers: Record<string, string>; body: unknown } {
  return { operation: req.operation, stream: req.stream, headers: req.headers, body: JSON.parse(req.body) as unknown };
}

/** An answer as recorded: the client body parsed and its usage. */
export function answered(t: Translation, upstream: unknown): { body: unknown; usage: unknown } {
  const out = t.response(JSON.stringify(upstream), 'public-model');
  return { body: JSON.parse(out.body) as unknown, usage: out.usage };
}

/** A stream as recorded: the client events, usage, and how it ended. */
export function streamed(tr: StreamTranslator, upstream: Golden['stream'][number]['upstream']): unknown {
  const text = upstreamEvents(upstream).map((e) => tr.event(e)).join('') + (tr.complete && !tr.failed ? tr.finish() : '');
  return { events: clientEvents(text), usage: tr.usage(), complete: tr.complete, failed: tr.failed };
}

/** Compares with the recorded expectation, or records it (UPDATE_GOLDEN=1). */
export function expectGolden(c: { expected?: unknown }, got: unknown): void {
  if (UPDATE) c.expected = got;
  expect(got).toEqual(c.expected);
}
