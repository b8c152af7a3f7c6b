// client-go's decision, table-driven: who may take or renew a Lease, judged by the candidate's own clock.
import { describe, expect, it } from 'vitest';
import { decide, observe, type LeaseRecord } from './lease-record.ts';

const rec = (holder: string, over: Partial<LeaseRecord> = {}): LeaseRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: '2026-01-01T00:00:00.000000Z',
  renewTime: '2026-01-01T00:00:05.000000Z',
  leaseTransitions: 3,
  ...over,
});
const me = { identity: 'b', durationSeconds: 15 };

describe('decide', () => {
  it.each([
    { case: 'another holder, renewed 14 s ago by our clock', holder: 'a', seenAgoMs: 14_000, kind: 'held' },
    { case: 'another holder, not renewed for 15 s', holder: 'a', seenAgoMs: 15_000, kind: 'take' },
    { case: 'released (empty holder)', holder: '', seenAgoMs: 0, kind: 'take' },
    { case: 'ours, renewed just now', holder: 'b', seenAgoMs: 0, kind: 'take' },
  ])('$case: $kind', ({ holder, seenAgoMs, kind }) => {
    const now = 1_000_000;
    const current = rec(holder);
    const d = decide(current, { record: current, at: now - seenAgoMs }, me, now);
    expect(d.kind).toBe(kind);
  });

  it('keeps acquireTime and transitions when renewing its own lease', () => {
    const current = rec('b');
    const d = decide(current, { record: current, at: 0 }, me, Date.parse('2026-01-01T00:01:00Z'));
    expect(d).toEqual({ kind: 'take', record: { ...current, renewTime: '2026-01-01T00:01:00.000Z' } });
  });

  it('counts a transition and sets acquireTime when taking over', () => {
    const current = rec('a');
    const d = decide(current, { record: current, at: 0 }, me, Date.parse('2026-01-01T00:01:00Z'));
    expect(d).toMatchObject({ kind: 'take', record: { holderIdentity: 'b', leaseTransitions: 4, acquireTime: '2026-01-01T00:01:00.000Z' } });
  });

  it('tells how long the holder has left', () => {
    const current = rec('a', { leaseDurationSeconds: 10 });
    expect(decide(current, { record: current, at: 0 }, me, 4_000)).toEqual({ kind: 'held', holder: 'a', expiresInMs: 6_000 });
  });
});

describe('observe', () => {
  it('restarts the expiry clock only when the record changed (a renewal), whatever the clocks of others say', () => {
    const first = observe(null, rec('a'), 100);
    expect(observe(first, rec('a'), 5_000)).toBe(first);
    expect(observe(first, rec('a', { renewTime: '2026-01-01T00:00:07.000000Z' }), 5_000)).toEqual({
      record: rec('a', { renewTime: '2026-01-01T00:00:07.000000Z' }),
      at: 5_000,
    });
  });
});
