import { describe, expect, it } from 'vitest';
import type { Snapshot } from '../contract/snapshot.ts';
import { MemoryBoard } from './board.ts';
import { declaredIncident } from './declared.ts';
import { MemoryHistory } from './history.ts';
import type { Incident } from './types.ts';
import { statusSource } from './view.ts';

const NOW = Date.UTC(2026, 4, 1, 12);
const target = (name: string) => ({
  name,
  provider: 'mock' as const,
  baseUrl: null,
  upstreamModel: 'm',
  credential: { kind: 'none' as const },
  weight: 1,
  timeouts: { connectMs: 1, firstByteMs: 1, idleMs: 1, totalMs: 1 },
  mock: null,
});
const snap: Snapshot = {
  schema: 1,
  version: 'v',
  plans: {},
  accounts: {},
  models: Object.fromEntries(
    ['alpha', 'beta', 'gamma'].map((id) => [
      id,
      {
        id,
        type: 'chat' as const,
        minTier: 0,
        inputNanoPerToken: 1,
        outputNanoPerToken: 1,
        maxOutputTokens: 1,
        targets: [target('t1'), target('t2')],
        fallbacks: [],
      },
    ]),
  ),
};

function declared(name: string, spec: Record<string, unknown>): Incident {
  const i = declaredIncident({
    metadata: { name, creationTimestamp: new Date(NOW - 3_600_000).toISOString() },
    spec: { impact: 'major', status: 'investigating', updates: [], ...spec },
  });
  if (!i) throw new Error('unparsed');
  return i;
}

describe('the status view', () => {
  it("best target wins; a maintenance window in effect and a person's stated state override the probes; open incidents first", async () => {
    const board = new MemoryBoard();
    const history = new MemoryHistory();
    const st = (model: string, t: string, state: 'operational' | 'major_outage' | 'partial_outage') => ({
      model,
      target: t,
      state,
      lastProbe: NOW - 1000,
      latencyMs: 50,
      message: '',
    });
    await board.publish([
      st('alpha', 't1', 'major_outage'),
      st('alpha', 't2', 'partial_outage'),
      st('beta', 't1', 'operational'),
      st('beta', 't2', 'major_outage'),
      st('gamma', 't1', 'operational'),
      st('gamma', 't2', 'operational'),
    ]);
    await history.saveIncident({
      id: 'old',
      title: 'old one',
      source: 'probe',
      models: ['alpha'],
      impact: 'critical',
      status: 'resolved',
      createdAt: NOW - 86_400_000,
      updatedAt: NOW - 80_000_000,
      resolvedAt: NOW - 80_000_000,
      updates: [],
      scheduled: null,
    });
    const list = [
      declared('window', {
        title: 'Upgrade',
        models: ['gamma'],
        maintenance: { start: new Date(NOW - 60_000).toISOString(), end: new Date(NOW + 60_000).toISOString() },
      }),
      declared('said', {
        title: 'Slow',
        models: ['beta'],
        state: 'degraded_performance',
        updates: [{ time: new Date(NOW - 600_000).toISOString(), status: 'identified', message: 'slow' }],
      }),
    ];
    const v = await statusSource({ snapshot: () => snap, board, history, intervalSeconds: 60, declared: () => list, now: () => NOW }).view();
    expect(v.models.map((m) => [m.id, m.state])).toEqual([
      ['alpha', 'partial_outage'],
      ['beta', 'degraded_performance'],
      ['gamma', 'under_maintenance'],
    ]);
    expect(v.models.find((m) => m.id === 'beta')?.latencyMs).toBe(50);
    expect(v.incidents.map((i) => [i.title, i.status])).toEqual([
      ['Slow', 'investigating'],
      ['old one', 'resolved'],
    ]);
    expect(v.maintenances.map((i) => i.title)).toEqual(['Upgrade']);
  });

  it('declared incidents: updates in order, resolved time, an unreadable object left out', () => {
    const i = declared('done', {
      title: 'Done',
      models: ['a'],
      status: 'resolved',
      updates: [
        { time: '2026-01-01T00:00:00Z', status: 'investigating', message: 'x' },
        { time: '2026-01-01T01:00:00Z', status: 'resolved', message: 'y' },
      ],
    });
    expect([i.id, i.createdAt, i.resolvedAt, i.updates.map((u) => u.status)]).toEqual([
      'declared-done',
      Date.UTC(2026, 0, 1),
      Date.UTC(2026, 0, 1, 1),
      ['investigating', 'resolved'],
    ]);
    expect(declaredIncident({ metadata: { name: 'x' }, spec: { title: 'no models' } })).toBeNull();
  });
});
