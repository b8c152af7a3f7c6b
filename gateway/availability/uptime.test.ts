import { describe, expect, it } from 'vitest';
import { downShare, modelState, targetState } from './states.ts';
import { appendSegment, dailyBars, DAY_MS, percent, uptime, uptimeWindows, type Segment } from './uptime.ts';
import { newTrack, step } from './incidents.ts';
import type { ProbeResult, State } from './types.ts';

const D0 = Date.UTC(2026, 0, 10); // a UTC midnight
const H = 3_600_000;
const seg = (fromH: number, toH: number, state: State): Segment => ({ from: D0 + fromH * H, to: D0 + toH * H, state });

describe('uptime over hand-made histories', () => {
  it.each<[string, Segment[], number, number, number | null]>([
    ['nothing observed', [], 0, 24, null],
    ['all day operational', [seg(0, 24, 'operational')], 0, 24, 1],
    ['degraded counts as up', [seg(0, 12, 'operational'), seg(12, 24, 'degraded_performance')], 0, 24, 1],
    ['6 h major outage of 24', [seg(0, 6, 'major_outage'), seg(6, 24, 'operational')], 0, 24, 0.75],
    ['6 h partial outage counts half', [seg(0, 6, 'partial_outage'), seg(6, 24, 'operational')], 0, 24, 0.875],
    ['maintenance left out of the time', [seg(0, 12, 'under_maintenance'), seg(12, 18, 'operational'), seg(18, 24, 'major_outage')], 0, 24, 0.5],
    ['only maintenance: no data', [seg(0, 24, 'under_maintenance')], 0, 24, null],
    ['a gap without probes is not observed', [seg(0, 2, 'operational'), seg(10, 12, 'major_outage')], 0, 24, 0.5],
    ['the window clips segments', [seg(-10, 3, 'major_outage'), seg(3, 4, 'operational')], 2, 4, 0.5],
    [
      '1 minute down in a day',
      [
        { from: D0, to: D0 + 60_000, state: 'major_outage' },
        { from: D0 + 60_000, to: D0 + DAY_MS, state: 'operational' },
      ],
      0,
      24,
      1 - 1 / 1440,
    ],
  ])('%s', (_name, segments, fromH, toH, expected) => {
    const u = uptime(segments, D0 + fromH * H, D0 + toH * H);
    if (expected === null) expect(u).toBeNull();
    else expect(u).toBeCloseTo(expected, 12);
  });

  it('merges equal neighbours and lets a newer round cut an older tail', () => {
    const s: Segment[] = [];
    appendSegment(s, seg(0, 1, 'operational'));
    appendSegment(s, seg(1, 2, 'operational'));
    appendSegment(s, seg(1.5, 2.5, 'major_outage'));
    appendSegment(s, seg(3, 4, 'major_outage'));
    expect(s).toEqual([seg(0, 1.5, 'operational'), seg(1.5, 2.5, 'major_outage'), seg(3, 4, 'major_outage')]);
  });

  it('daily bars: 90 UTC days, oldest first, today up to now, the worst state of each day', () => {
    const now = D0 + 2 * DAY_MS + 12 * H;
    const segments = [seg(0, 24, 'operational'), seg(24, 30, 'major_outage'), seg(30, 48, 'degraded_performance'), seg(48, 60, 'operational')];
    const bars = dailyBars(segments, now);
    expect(bars).toHaveLength(90);
    expect(bars.slice(-3)).toEqual([
      { day: '2026-01-10', uptime: 1, worst: 'operational' },
      { day: '2026-01-11', uptime: 0.75, worst: 'major_outage' },
      { day: '2026-01-12', uptime: 1, worst: 'operational' },
    ]);
    expect(bars[0]).toEqual({ day: '2025-10-15', uptime: null, worst: null });
    expect(uptimeWindows(segments, now)).toEqual({ h24: 1 - 0 / 24, d7: 1 - 6 / 60, d30: 1 - 6 / 60, d90: 1 - 6 / 60 });
  });

  it.each<[number | null, string]>([
    [null, 'no data'],
    [1, '100.00%'],
    [0.99999, '99.99%'],
    [0.875, '87.50%'],
    [0, '0.00%'],
  ])('percent(%s) = %s', (s, text) => {
    expect(percent(s)).toBe(text);
  });
});

const probe = (ok: boolean, latencyMs = 100): ProbeResult => ({
  model: 'm',
  target: 't',
  at: 0,
  ok,
  latencyMs,
  status: ok ? 200 : 500,
  message: '',
  costNano: 0,
});

describe('states', () => {
  it.each<[string, ProbeResult[], { calls: number; failures: number }, State]>([
    ['no data yet', [], { calls: 0, failures: 0 }, 'operational'],
    ['good probes', [probe(true), probe(true)], { calls: 0, failures: 0 }, 'operational'],
    ['slow probe', [probe(true), probe(true, 6000)], { calls: 0, failures: 0 }, 'degraded_performance'],
    ['one failed probe', [probe(true), probe(false)], { calls: 0, failures: 0 }, 'partial_outage'],
    ['two failed probes', [probe(false), probe(false)], { calls: 0, failures: 0 }, 'major_outage'],
    ['a failure, then recovered', [probe(false), probe(true)], { calls: 0, failures: 0 }, 'operational'],
    ['some live failures', [probe(true)], { calls: 100, failures: 3 }, 'degraded_performance'],
    ['10% live failures', [probe(true)], { calls: 100, failures: 10 }, 'partial_outage'],
    ['half the live calls failed', [probe(true)], { calls: 10, failures: 5 }, 'major_outage'],
    ['too few live calls to judge', [probe(true)], { calls: 4, failures: 4 }, 'operational'],
  ])('%s', (_n, probes, live, state) => {
    expect(targetState(probes, live)).toBe(state);
  });

  it.each<[State[], boolean, State]>([
    [['operational', 'major_outage'], false, 'operational'],
    [['major_outage', 'partial_outage'], false, 'partial_outage'],
    [['major_outage', 'major_outage'], false, 'major_outage'],
    [['degraded_performance', 'partial_outage'], false, 'degraded_performance'],
    [['operational'], true, 'under_maintenance'],
  ])('model of %j (maintenance %s) is %s', (targets, maintenance, state) => {
    expect(modelState(targets, maintenance)).toBe(state);
  });

  it('down weights', () => {
    expect([
      downShare('major_outage'),
      downShare('partial_outage'),
      downShare('degraded_performance'),
      downShare('operational'),
      downShare('under_maintenance'),
    ]).toEqual([1, 0.5, 0, 0, null]);
  });
});

describe('incidents from probes', () => {
  it('opens after two bad rounds, identified, monitoring, resolved after two good rounds', () => {
    const t = newTrack();
    let n = 0;
    const id = (): string => `inc-${++n}`;
    const rounds: State[] = ['operational', 'major_outage', 'major_outage', 'major_outage', 'operational', 'operational', 'operational'];
    const changes = rounds.map((s, i) => step(t, { model: 'gpt', state: s, detail: s === 'operational' ? '' : 'primary: 500', at: i * 1000 }, id));
    const seen = rounds.map((_s, i) => changes[i] && `${changes[i].kind}:${changes[i].incident.updates.filter((u) => u.at <= i * 1000).at(-1)?.status}`);
    expect(seen).toEqual([null, null, 'open:investigating', 'update:identified', 'update:monitoring', 'update:resolved', null]);
    const inc = changes[2]?.incident;
    expect(inc?.impact).toBe('critical');
    expect(inc?.resolvedAt).toBe(5000);
    expect(inc?.updates.map((u) => [u.at, u.status])).toEqual([
      [2000, 'investigating'],
      [3000, 'identified'],
      [4000, 'monitoring'],
      [5000, 'resolved'],
    ]);
  });

  it('a single bad round opens nothing; a relapse while monitoring is identified again', () => {
    const t = newTrack();
    const states: State[] = ['partial_outage', 'operational', 'partial_outage', 'partial_outage', 'operational', 'major_outage', 'operational', 'operational'];
    const out = states.map((s, i) => step(t, { model: 'm', state: s, detail: '', at: i }, () => 'x'));
    expect(out.map((c, i) => c && c.incident.updates.filter((u) => u.at <= i).at(-1)?.status)).toEqual([
      null,
      null,
      null,
      'investigating',
      'monitoring',
      'identified',
      'monitoring',
      'resolved',
    ]);
    expect(out[3]?.incident.impact).toBe('critical');
  });

  it('a declared incident open for the model stops the probes from opening one', () => {
    const t = newTrack();
    expect([0, 1].map((at) => step(t, { model: 'm', state: 'major_outage', detail: '', at, declaredOpen: true }, () => 'x'))).toEqual([null, null]);
  });
});
