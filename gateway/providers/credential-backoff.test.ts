import { describe, expect, it } from 'vitest';
import { CredentialBackoff, CredentialBackoffs, FIRST_HOLD_MS, holdAfter, MAX_HOLD_MS } from './credential-backoff.ts';

describe('the clouds’ credential back-off', () => {
  it.each([
    [1, FIRST_HOLD_MS],
    [2, 2 * FIRST_HOLD_MS],
    [3, 4 * FIRST_HOLD_MS],
    [5, MAX_HOLD_MS],
    [1000, MAX_HOLD_MS],
  ])('after %i failures in a row holds %i ms', (failures, ms) => {
    expect(holdAfter(failures)).toBe(ms);
  });

  it('holds the failure until the hold ends, doubles it while failures go on, and forgets it on a success', () => {
    const b = new CredentialBackoff<string>();
    expect(b.held(0)).toBeNull();
    b.failed('refused', 0);
    expect(b.held(FIRST_HOLD_MS - 1)).toBe('refused');
    expect(b.held(FIRST_HOLD_MS)).toBeNull();
    b.failed('refused again', FIRST_HOLD_MS);
    expect(b.held(3 * FIRST_HOLD_MS - 1)).toBe('refused again');
    b.succeeded();
    expect(b.held(3 * FIRST_HOLD_MS - 1)).toBeNull();
    b.failed('refused', 0);
    expect(b.held(FIRST_HOLD_MS)).toBeNull();
  });

  it('keeps one back-off per id, and a bounded number of them', () => {
    const all = new CredentialBackoffs<string, string>(2);
    all.of('a').failed('x', 0);
    expect(all.of('a').held(1)).toBe('x');
    expect(all.of('b').held(1)).toBeNull();
    all.of('c');
    expect(all.of('a').held(1)).toBeNull();
  });
});
