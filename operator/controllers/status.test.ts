// Status writes are level-based: the same verdict twice changes nothing, so an unchanged object is never patched.
import { describe, expect, it } from 'vitest';
import { readyCondition } from './conditions.ts';
import { statusDiff } from './status.ts';

const t1 = new Date('2026-01-01T00:00:00Z');
const t2 = new Date('2026-01-01T00:05:00Z');

describe('readyCondition', () => {
  it('keeps lastTransitionTime while the status stays, moves it when the status flips', () => {
    const first = readyCondition(undefined, { ready: false, reason: 'UnknownAccount', message: 'm' }, 1, t1);
    expect(first).toEqual([
      { type: 'Ready', status: 'False', reason: 'UnknownAccount', message: 'm', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' },
    ]);
    const sameStatus = readyCondition(first, { ready: false, reason: 'UnknownPlan', message: 'n' }, 2, t2);
    expect(sameStatus[0]).toMatchObject({ reason: 'UnknownPlan', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z' });
    expect(readyCondition(first, { ready: true, reason: 'Active', message: 'ok' }, 2, t2)[0]?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
  });
});

describe('statusDiff', () => {
  it('finds nothing to write when the status already says it, in any key order', () => {
    const conditions = readyCondition(undefined, { ready: true, reason: 'Active', message: 'ok' }, 3, t1);
    const current = {
      conditions: [{ ...conditions[0] }].map((c) => Object.fromEntries(Object.entries(c ?? {}).reverse())),
      state: 'Active',
      observedGeneration: 3,
    };
    expect(statusDiff(current, { state: 'Active', observedGeneration: 3, conditions })).toEqual([]);
  });

  it('names changed fields; null asks for a field to be absent', () => {
    expect(statusDiff({ state: 'Active', revokedAt: 'x' }, { state: 'Revoked', revokedAt: null, displayedKey: 'sk-svc-…abcd' })).toEqual([
      'state',
      'revokedAt',
      'displayedKey',
    ]);
    expect(statusDiff({ state: 'Active' }, { revokedAt: null })).toEqual([]);
  });
});
