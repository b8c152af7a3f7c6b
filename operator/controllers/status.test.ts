// Status writes are level-based: the same verdict twice changes nothing, so an unchanged object is never patched.
import { describe, expect, it } from 'vitest';
import type { CustomObject } from '../kube/clients.ts';
import type { EventNote } from '../kube/events.ts';
import { readyCondition, type Verdict } from './conditions.ts';
import type { ControllerContext } from './context.ts';
import { statusDiff, writeStatus } from './status.ts';
import { cr } from './test-context.ts';

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

describe('writeStatus', () => {
  /** A context that records the status patches and Events the write makes. */
  function recording(): { ctx: ControllerContext; patches: Record<string, unknown>[]; events: EventNote[] } {
    const patches: Record<string, unknown>[] = [];
    const events: EventNote[] = [];
    const clients = {
      namespace: 'team-a',
      custom: { patchNamespacedCustomObjectStatus: async (req: { body: { status: Record<string, unknown> } }) => patches.push(req.body.status) },
    };
    const log = { info: () => {}, debug: () => {}, warn: () => {}, error: () => {} };
    const ctx = { clients, log, events: { record: async (_o: CustomObject, n: EventNote) => events.push(n) }, now: () => t1 };
    return { ctx: ctx as unknown as ControllerContext, patches, events };
  }
  /** The object as the API server holds it after the write. */
  const after = (obj: CustomObject, patch: Record<string, unknown> | undefined): CustomObject => ({ ...obj, status: patch });

  it('records a Warning Event for a new failure reason, once, and none for a state that only says work is under way', async () => {
    const { ctx, patches, events } = recording();
    const key = cr('ApiKey', 'k', { accountRef: 'acme' });
    const unknown: Verdict = { ready: false, reason: 'UnknownAccount', message: 'Account acme does not exist.' };
    await writeStatus(ctx, 'ApiKey', key, unknown);
    await writeStatus(ctx, 'ApiKey', after(key, patches[0]), unknown);
    expect(patches).toHaveLength(1);
    expect(events).toEqual([{ type: 'Warning', reason: 'UnknownAccount', action: 'Reconcile', message: 'Account acme does not exist.' }]);

    const publishing: Verdict = { ready: false, reason: 'Publishing', message: 'The key is on its way to the gateways.' };
    await writeStatus(ctx, 'ApiKey', after(key, patches[0]), publishing);
    expect(patches).toHaveLength(2);
    expect(patches[1]?.conditions).toMatchObject([{ type: 'Ready', status: 'False', reason: 'Publishing' }]);
    expect(events).toHaveLength(1);

    await writeStatus(ctx, 'ApiKey', after(key, patches[1]), { ready: true, reason: 'Active', message: 'Served.' });
    expect(patches).toHaveLength(3);
    expect(events).toHaveLength(1);
  });
});
