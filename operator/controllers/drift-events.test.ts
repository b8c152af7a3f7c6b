import { describe, expect, it } from 'vitest';
import { driftLogMessage, driftRecordJson, parseDriftRecord, type Drift } from '../../gateway/contract/money-drift.ts';
import type { ControllerContext } from './context.ts';
import { DriftEvents } from './drift-events.ts';

describe('the drift record the exporter publishes', () => {
  it('round-trips, and the log line names the account, the field and the amount', () => {
    const d: Drift[] = [
      { account: 'acme', field: 'spent', driftNano: 12_345 },
      { account: 'beta', field: 'credited', driftNano: -1_000_000_000 },
    ];
    expect(parseDriftRecord(driftRecordJson(d, new Date(0)))).toEqual(d);
    expect(driftLogMessage(d[0] as Drift)).toBe("Money drift: account acme: Redis's spent is above the Postgres ledger's by 0.000012345 USD");
    expect(driftLogMessage(d[1] as Drift)).toBe("Money drift: account beta: Redis's credited is below the Postgres ledger's by 1 USD");
  });

  it.each([
    ['absent', null],
    ['not JSON', '{'],
    ['no list', '{"checkedAt":"x"}'],
    ['a bad field', '{"drifts":[{"account":"a","field":"balance","driftNano":1}]}'],
    ['not an integer', '{"drifts":[{"account":"a","field":"spent","driftNano":1.5}]}'],
    ['zero', '{"drifts":[{"account":"a","field":"spent","driftNano":0}]}'],
    ['no account', '{"drifts":[{"account":"","field":"spent","driftNano":3}]}'],
  ])('reads nothing from a record %s', (_name, raw) => {
    expect(parseDriftRecord(raw)).toEqual([]);
  });
});

describe('DriftEvents: one Event per account, field and amount', () => {
  function harness(): { tick: (d: Drift[]) => Promise<void>; told: string[] } {
    let now: Drift[] = [];
    const told: string[] = [];
    const ctx = {
      store: { moneyDrift: async () => now },
      caches: { Account: { get: (name: string) => (name === 'gone' ? undefined : { kind: 'Account', metadata: { name } }) } },
      events: {
        record: async (obj: { metadata: { name: string } }, note: { reason: string; message: string }) =>
          void told.push(`${obj.metadata.name} ${note.reason} ${note.message}`),
      },
      log: { debug: () => {} },
    } as unknown as ControllerContext;
    const events = new DriftEvents(ctx);
    return {
      told,
      tick: async (d) => {
        now = d;
        await events.tick();
      },
    };
  }

  it('tells a drift once while it stays, again when its amount changes or when it comes back', async () => {
    const h = harness();
    const a = { account: 'acme', field: 'spent', driftNano: 12_345 } as const;
    await h.tick([a]);
    await h.tick([a]);
    expect(h.told).toHaveLength(1);
    expect(h.told[0]).toContain("acme MoneyDrift Redis's spent is above the Postgres ledger's by 0.000012345 USD (12345 nano-USD)");
    await h.tick([{ ...a, driftNano: 20_000 }]);
    expect(h.told).toHaveLength(2);
    await h.tick([]);
    await h.tick([{ ...a, driftNano: 20_000 }]);
    expect(h.told).toHaveLength(3);
    // Another field of the same account is its own drift; an account no longer in the cluster gets no Event.
    await h.tick([
      { ...a, driftNano: 20_000 },
      { account: 'acme', field: 'credited', driftNano: -5 },
      { account: 'gone', field: 'spent', driftNano: 1 },
    ]);
    expect(h.told).toHaveLength(4);
    expect(h.told[3]).toContain("acme MoneyDrift Redis's credited is below the Postgres ledger's by 0.000000005 USD");
  });
});
