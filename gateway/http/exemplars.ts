// Histogram observations with the call's trace id as an OpenMetrics exemplar, when the histogram takes them
// (tracing on: Metrics({ exemplars: true })). prom-client keeps the last exemplar per bucket and shows it only
// to OpenMetrics scrapes (exposition.ts).
import type { Histogram, LabelValues } from 'prom-client';

export type Exemplar = { trace_id: string } | null;

export function exemplarOf(traceId: string | null | undefined): Exemplar {
  return traceId ? { trace_id: traceId } : null;
}

/** `h.observe`, with `ex` as the exemplar when `h` was made with enableExemplars (ex non-null only then). */
export function observe<T extends string>(h: Histogram<T>, labels: LabelValues<T>, value: number, ex: Exemplar | undefined): void {
  if (ex === undefined || (h as unknown as { enableExemplars: boolean }).enableExemplars !== true) h.observe(labels, value);
  else h.observe({ labels, value, ...(ex ? { exemplarLabels: ex as unknown as LabelValues<T> } : {}) });
}
