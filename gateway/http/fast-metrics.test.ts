import { Counter, Histogram, Registry, type LabelValues, type RegistryContentType } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FastCounter, FastHistogram } from './fast-metrics.ts';

/** The same metrics, prom-client's and ours, each in a registry of its own: their scrapes must read the same. */
function pair(): { plain: Registry; fast: Registry; h: [Histogram<'a' | 'b'>, Histogram<'a' | 'b'>]; c: [Counter<'m'>, Counter<'m'>] } {
  const plain = new Registry();
  const fast = new Registry();
  const hc = { name: 'h_seconds', help: 'h', labelNames: ['b', 'a'] as const, buckets: [0.005, 0.1, 1, 2.5, 10] };
  const cc = { name: 'c_total', help: 'c', labelNames: ['m'] as const };
  return {
    plain,
    fast,
    h: [new Histogram({ ...hc, registers: [plain] }), new FastHistogram({ ...hc, registers: [fast] })],
    c: [new Counter({ ...cc, registers: [plain] }), new FastCounter({ ...cc, registers: [fast] })],
  };
}

describe('FastHistogram and FastCounter', () => {
  it('scrape exactly as prom-client after the same observations, resets and removals', async () => {
    const { plain, fast, h, c } = pair();
    const values = [0, 0.004, 0.005, 0.05, 0.1, 0.7, 1, 2.5, 3, 10, 11, 1e9];
    for (const x of [h[0], h[1]]) {
      for (const [i, v] of values.entries()) x.observe({ a: `x${i % 3}`, b: i % 2 === 0 ? 'even' : 'odd' }, v);
      x.observe({ a: 'only-a' }, 0.2);
    }
    for (const x of [c[0], c[1]]) {
      x.inc({ m: 'gpt' });
      x.inc({ m: 'gpt' }, 2.5);
      x.inc({ m: 'claude' }, 0);
    }
    expect(await fast.metrics()).toBe(await plain.metrics());

    for (const x of [h[0], h[1]]) x.remove({ a: 'x1', b: 'odd' });
    for (const x of [c[0], c[1]]) x.remove({ m: 'gpt' });
    for (const x of [h[0], h[1]]) x.observe({ a: 'x1', b: 'odd' }, 0.3);
    for (const x of [c[0], c[1]]) x.inc({ m: 'gpt' }, 4);
    expect(await fast.metrics()).toBe(await plain.metrics());

    for (const x of [h[0], h[1], c[0], c[1]]) x.reset();
    for (const x of [h[0], h[1]]) x.observe({ a: 'x0', b: 'even' }, 0.01);
    for (const x of [c[0], c[1]]) x.inc({ m: 'claude' });
    expect(await fast.metrics()).toBe(await plain.metrics());
  });

  it('refuses what prom-client refuses', () => {
    const { h, c } = pair();
    expect(() => h[1].observe({ a: 'x' }, Number.NaN)).toThrow(TypeError);
    expect(() => c[1].inc({ m: 'x' }, -1)).toThrow(/decrease/);
  });

  it('an unlabelled histogram and one with exemplars stay prom-client’s own', async () => {
    const openMetrics = (): Registry => {
      const r = new Registry();
      (r as unknown as Registry<RegistryContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
      return r;
    };
    const reg = openMetrics();
    const plainReg = openMetrics();
    const cfg = { name: 'x_seconds', help: 'x', labelNames: ['m'] as const, buckets: [0.1, 1], enableExemplars: true };
    const a = new FastHistogram({ ...cfg, registers: [reg] });
    const b = new Histogram({ ...cfg, registers: [plainReg] });
    const exemplar = { trace_id: 'abc' } as unknown as LabelValues<'m'>;
    for (const x of [a, b]) x.observe({ labels: { m: 'gpt' }, value: 0.5, exemplarLabels: exemplar });
    const strip = (s: string): string => s.replace(/ \d+\.\d+$/gm, '');
    expect(strip(await reg.metrics())).toBe(strip(await plainReg.metrics()));
    expect(await reg.metrics()).toContain('trace_id="abc"');

    const u = new FastHistogram({ name: 'u_seconds', help: 'u', buckets: [1], registers: [] });
    u.observe(0.5);
    expect((await u.get()).values.find((v) => v.metricName === 'u_seconds_count')?.value).toBe(1);
  });
});
