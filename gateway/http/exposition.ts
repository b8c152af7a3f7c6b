// The text a scrape gets. Prometheus' text format by default; OpenMetrics (with the latency histograms' trace_id
// exemplars) when the process traces and the scraper asks for it (Accept: application/openmetrics-text, as Prometheus
// does by default). prom-client renders one format per registry and renames counters while it renders OpenMetrics,
// so the renders of a registry that may do both take turns, and each OpenMetrics one puts the names back.
import { Registry, type RegistryContentType } from 'prom-client';

type Named = { name: string };

export interface Exposition {
  contentType: string;
  text: string;
}

export type Render = (accept: string | undefined) => Promise<Exposition>;

export function wantsOpenMetrics(accept: string | undefined): boolean {
  return accept !== undefined && /application\/openmetrics-text/i.test(accept);
}

/**
 * Renders `registry` by the scrape's Accept header: OpenMetrics only when `openMetrics` is on (a registry made for
 * exemplars, OpenMetrics-typed), else Prometheus' text format.
 */
export function renderer(registry: Registry, openMetrics: boolean): Render {
  if (!openMetrics) return async () => ({ contentType: registry.contentType, text: await registry.metrics() });
  const reg = registry as unknown as Registry<RegistryContentType>;
  const base = reg.contentType;
  let turn: Promise<unknown> = Promise.resolve();
  return (accept) => {
    const run = turn.then(async (): Promise<Exposition> => {
      const contentType = wantsOpenMetrics(accept) ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE;
      const names = reg.getMetricsAsArray().map((m) => [m, (m as unknown as Named).name] as const);
      reg.setContentType(contentType);
      try {
        return { contentType, text: await reg.metrics() };
      } finally {
        reg.setContentType(base);
        for (const [m, name] of names) (m as unknown as Named).name = name;
      }
    });
    turn = run.catch(() => undefined);
    return run;
  };
}
