import { describe, expect, it } from 'vitest';
import { nextProbeAt, probeOffsetMs, ProbeSlots } from './probe-schedule.ts';

describe('probe schedule', () => {
  it('places models all over the interval, the same way every time', () => {
    const intervalMs = 180_000;
    const offsets = Array.from({ length: 5000 }, (_, i) => probeOffsetMs(`model-${i}`, intervalMs));
    expect(offsets.every((o) => Number.isInteger(o) && o >= 0 && o < intervalMs)).toBe(true);
    expect(offsets).toEqual(Array.from({ length: 5000 }, (_, i) => probeOffsetMs(`model-${i}`, intervalMs)));
    // Every tenth of the interval gets a share (about 500 each): no burst at one moment.
    const tenths = Array.from({ length: 10 }, (_, t) => offsets.filter((o) => Math.floor((o / intervalMs) * 10) === t).length);
    for (const n of tenths) expect(n).toBeGreaterThan(400);
    for (const n of tenths) expect(n).toBeLessThan(600);
  });

  it.each([
    [1000, 300, 10_000, 10_300],
    [10_300, 300, 10_000, 20_300],
    [10_299, 300, 10_000, 10_300],
    [0, 0, 5000, 5000],
    [-1, 0, 5000, 0],
  ])('after %i with offset %i in %i ms the next probe is at %i', (now, offset, interval, next) => {
    expect(nextProbeAt(now, offset, interval)).toBe(next);
  });

  it('is never more than one interval away', () => {
    for (let now = 0; now < 50_000; now += 997) {
      const next = nextProbeAt(now, 1234, 5000);
      expect(next).toBeGreaterThan(now);
      expect(next - now).toBeLessThanOrEqual(5000);
      expect((next - 1234) % 5000).toBe(0);
    }
  });
});

describe('ProbeSlots', () => {
  it('runs at most `max` jobs at once, every job in the end, in order of arrival', async () => {
    const slots = new ProbeSlots(3);
    let now = 0;
    let peak = 0;
    const started: number[] = [];
    const gates: Array<() => void> = [];
    const jobs = Array.from({ length: 10 }, (_, i) =>
      slots.run(async () => {
        started.push(i);
        peak = Math.max(peak, ++now);
        await new Promise<void>((resolve) => gates.push(resolve));
        now--;
        return i;
      }),
    );
    for (let done = 0; done < 10; done++) {
      await new Promise((r) => setImmediate(r));
      gates.shift()?.();
    }
    expect(await Promise.all(jobs)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
    expect(slots.queued).toBe(0);
  });

  it('frees the slot of a job that failed', async () => {
    const slots = new ProbeSlots(1);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(() => Promise.resolve('next'))).toBe('next');
  });

  it('refuses a cap below one', () => {
    expect(() => new ProbeSlots(0)).toThrow(/at least 1/);
  });
});
