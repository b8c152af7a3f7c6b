import { describe, expect, it } from 'vitest';
import { weightedOrder } from './order.ts';
import { reasonForStatus, retryAfterSeconds } from './classify.ts';

const t = (name: string, weight: number) => ({ name, weight });

describe('weightedOrder', () => {
  it('tries every target once, weight-0 ones last in listed order', () => {
    const out = weightedOrder([t('z1', 0), t('a', 1), t('b', 2), t('z2', 0)], () => 0.5);
    expect(out.map((x) => x.name).sort()).toEqual(['a', 'b', 'z1', 'z2']);
    expect(out.slice(2).map((x) => x.name)).toEqual(['z1', 'z2']);
  });

  it('picks first by weight: 3:1 gives about 75% first picks', () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let firstA = 0;
    for (let i = 0; i < 4000; i++) if (weightedOrder([t('a', 3), t('b', 1)], rnd)[0]?.name === 'a') firstA++;
    expect(firstA / 4000).toBeGreaterThan(0.72);
    expect(firstA / 4000).toBeLessThan(0.78);
  });

  it('uses the random draw on cumulative weights', () => {
    expect(weightedOrder([t('a', 1), t('b', 3)], () => 0.5)[0]?.name).toBe('b');
    expect(weightedOrder([t('a', 1), t('b', 3)], () => 0.2)[0]?.name).toBe('a');
  });
});

describe('classify', () => {
  it.each([
    [429, 'upstream_429'],
    [500, 'upstream_5xx'],
    [503, 'upstream_5xx'],
    [400, null],
    [401, null],
    [404, null],
  ])('status %i -> %s', (status, reason) => expect(reasonForStatus(status)).toBe(reason));

  it('reads retry-after as seconds or a date', () => {
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(new Date(Date.now() + 30_000).toUTCString())).toBeGreaterThanOrEqual(29);
    expect(retryAfterSeconds(undefined)).toBeUndefined();
    expect(retryAfterSeconds('0')).toBe(1);
  });
});
