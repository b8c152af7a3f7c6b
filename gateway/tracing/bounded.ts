// The span pipeline's accounting: a queue bound of our own in front of the BatchSpanProcessor (so no span is
// dropped out of our sight), and what became of each sampled span, for svc_gateway_trace_spans_total{result}:
// exported, failed (the collector refused or was unreachable), dropped (the queue was full: a collector down or
// slow for long). A call never waits on any of it.
import { TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';

export interface SpanCounts {
  exported: number;
  failed: number;
  dropped: number;
}

export function countingExporter(inner: SpanExporter, counts: SpanCounts, left: (n: number) => void): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
      left(spans.length);
      inner.export(spans, (r) => {
        if (r.code === ExportResultCode.SUCCESS) counts.exported += spans.length;
        else counts.failed += spans.length;
        done(r);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/** Passes at most `max` sampled spans waiting for export to `inner`; the rest are counted as dropped. */
export class BoundedProcessor implements SpanProcessor {
  private queued = 0;
  private readonly inner: SpanProcessor;
  private readonly max: number;
  private readonly counts: SpanCounts;

  constructor(inner: SpanProcessor, max: number, counts: SpanCounts) {
    this.inner = inner;
    this.max = max;
    this.counts = counts;
  }

  /** Spans handed to the exporter left the queue. */
  left(n: number): void {
    this.queued = Math.max(0, this.queued - n);
  }

  onStart(...args: Parameters<SpanProcessor['onStart']>): void {
    this.inner.onStart(...args);
  }

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.queued >= this.max) {
      this.counts.dropped++;
      return;
    }
    this.queued++;
    this.inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
