import { TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { BoundedProcessor, type SpanCounts } from './bounded.ts';

const span = (sampled: boolean): ReadableSpan =>
  ({ spanContext: () => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE }) }) as ReadableSpan;

describe('the bounded span queue', () => {
  it('passes at most `max` waiting spans on, counts the rest as dropped, takes more once some left for export', () => {
    const passed: ReadableSpan[] = [];
    const inner = { onStart: () => {}, onEnd: (s: ReadableSpan) => passed.push(s), forceFlush: async () => {}, shutdown: async () => {} } as SpanProcessor;
    const counts: SpanCounts = { exported: 0, failed: 0, dropped: 0 };
    const q = new BoundedProcessor(inner, 3, counts);
    for (let i = 0; i < 5; i++) q.onEnd(span(true));
    q.onEnd(span(false)); // not sampled: neither queued nor dropped
    expect([passed.length, counts.dropped]).toEqual([3, 2]);
    q.left(2);
    for (let i = 0; i < 3; i++) q.onEnd(span(true));
    expect([passed.length, counts.dropped]).toEqual([5, 3]);
  });
});
