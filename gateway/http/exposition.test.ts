import { Counter, Histogram, Registry, type RegistryContentType } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { observe } from './exemplars.ts';
import { renderer } from './exposition.ts';

const OM = 'application/openmetrics-text; version=1.0.0';

describe('the exposition a scrape gets', () => {
  it('without exemplars: always the Prometheus text format', async () => {
    const r = new Registry();
    new Counter({ name: 'x_total', help: 'x', registers: [r] }).inc();
    const render = renderer(r, false);
    expect((await render(OM)).contentType).toMatch(/^text\/plain/);
  });

  it('with exemplars: OpenMetrics with trace_id to a scrape that asks for it, the text format (names intact) to others', async () => {
    const r = new Registry();
    (r as unknown as Registry<RegistryContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const c = new Counter({ name: 'calls_total', help: 'calls', registers: [r] });
    const h = new Histogram({ name: 'lat_seconds', help: 'latency', buckets: [0.1, 1], registers: [r], enableExemplars: true });
    c.inc();
    observe(h, {}, 0.05, { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });
    observe(h, {}, 0.5, null);
    const render = renderer(r, true);
    const [om, plain, again] = await Promise.all([render(OM), render(undefined), render('text/plain;version=0.0.4')]);
    expect(om.contentType).toMatch(/^application\/openmetrics-text/);
    expect(om.text).toMatch(/^lat_seconds_bucket\{le="0.1"\} 1 # \{trace_id="4bf92f3577b34da6a3ce929d0e0e4736"\} 0.05 /m);
    expect(om.text).toMatch(/^# TYPE calls counter$/m);
    expect(om.text.trimEnd().endsWith('# EOF')).toBe(true);
    for (const p of [plain, again]) {
      expect(p.contentType).toMatch(/^text\/plain/);
      expect(p.text).toMatch(/^# TYPE calls_total counter$/m);
      expect(p.text).toMatch(/^calls_total 1$/m);
      expect(p.text).not.toContain('trace_id');
    }
  });
});
