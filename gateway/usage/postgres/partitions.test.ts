import { describe, expect, it } from 'vitest';
import { monthKey, monthsFrom } from './partitions.ts';

describe('partition months', () => {
  it('are UTC months', () => {
    expect(monthKey('2026-11-30T23:59:59.999-02:00')).toBe('2026-12');
    expect(monthKey('2026-12-01T00:30:00+01:00')).toBe('2026-11');
  });
  it('run ahead across a year end', () => {
    expect(monthsFrom(Date.parse('2026-11-15T00:00:00Z'))).toEqual(['2026-11', '2026-12', '2027-01', '2027-02']);
    expect(monthsFrom(Date.parse('2027-01-31T23:00:00Z'), 1)).toEqual(['2027-01', '2027-02']);
  });
});
