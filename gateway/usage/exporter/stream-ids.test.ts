import { describe, expect, it } from 'vitest';
import { compareIds, idTime, nextId, safeTrimId } from './stream-ids.ts';

describe('stream ids', () => {
  it.each([
    ['1-0', '1-1', -1],
    ['2-0', '1-9', 1],
    ['10-0', '9-0', 1],
    ['5-5', '5-5', 0],
    ['1700000000000-12', '1700000000000-2', 1],
  ])('compare %s with %s', (a, b, want) => {
    expect(compareIds(a, b)).toBe(want);
  });

  it('steps to the next id, carrying into the milliseconds', () => {
    expect(nextId('0-0')).toBe('0-1');
    expect(nextId('1700000000000-4')).toBe('1700000000000-5');
    expect(nextId('7-18446744073709551615')).toBe('8-0');
  });

  it('reads the time of an id', () => {
    expect(idTime('1700000000123-7')).toBe(1_700_000_000_123);
  });

  it('rejects what is not an id', () => {
    expect(() => compareIds('abc', '1-0')).toThrow(/not a stream entry id/);
  });
});

describe('safeTrimId', () => {
  it.each([
    ['nothing delivered yet: trims nothing', { lastDelivered: '0-0', oldestPending: null }, '0-1'],
    ['all delivered entries acknowledged: trims through the last delivered', { lastDelivered: '100-3', oldestPending: null }, '100-4'],
    ['an entry still pending: stops below it', { lastDelivered: '100-3', oldestPending: '90-0' }, '90-0'],
    ['pending read after more were delivered: never past the first read', { lastDelivered: '100-3', oldestPending: '120-0' }, '100-4'],
  ])('%s', (_name, pos, want) => {
    expect(safeTrimId(pos)).toBe(want);
  });
});
