// The SLA job on a timer: two job instances (as two processes would run it, each with its own connection) on one real
// Redis. A month below target -> one credit sla-YYYY-MM across rounds and restarts; a month at or above target -> none;
// before the month has ended (and settled) -> none.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueMonth, previousMonth, SlaJob, startSlaJob, type SlaJobOptions } from '../../billing/sla/sla-job.ts';
import type { StatementSource, UsageRow } from '../../billing/statements/statement.ts';
import { MemoryHistory } from '../../gateway/availability/history.ts';
import { RedisBilling } from '../../gateway/state/billing-ledger.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

const HOUR = 3_600_000;
const NOV = Date.UTC(2026, 10, 1);
const DEC = Date.UTC(2026, 11, 1);
const row = (model: string, requests: number, costNano: number): UsageRow => ({
  model,
  apiKey: 'k',
  taskType: '',
  requests,
  inputTokens: 0,
  outputTokens: 0,
  costNano,
  feeNano: 0,
});

// November: model down-large 97% up (25% tier), model up 100% up.
const source: StatementSource = {
  month: async (account, month) => ({
    openingNano: 0,
    credits: [],
    usage: month !== '2026-11' ? [] : account === 'below' ? [row('down-large', 100, 4_000_000_000)] : [row('up', 100, 4_000_000_000)],
  }),
};
const history = new MemoryHistory();
const accounts: SlaJobOptions['accounts'] = async () => [
  { account: 'below', billing: { invoiceHeader: 'Below Co', sla: { target: 99.9 } } },
  { account: 'at', billing: { invoiceHeader: 'At Co', sla: { target: 99.9 } } },
  { account: 'no-sla', billing: null },
];

let redis: TestRedis;
const clients: Redis[] = [];

beforeAll(async () => {
  redis = await startRedis('sla-job');
  const month = DEC - NOV;
  await history.addRound({ model: 'down-large', at: NOV, intervalMs: month * 0.97, state: 'operational', probes: [] });
  await history.addRound({ model: 'down-large', at: NOV + month * 0.97, intervalMs: month * 0.03, state: 'major_outage', probes: [] });
  await history.addRound({ model: 'up', at: NOV, intervalMs: month, state: 'operational', probes: [] });
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await redis?.stop();
});

/** A job as one process would run it: its own Redis connection and ledger. */
function job(now: () => number, copied: string[] = []): SlaJob {
  const client = new Redis(redis.url);
  clients.push(client);
  return new SlaJob({
    ledger: new RedisBilling(client, redis.prefix),
    source,
    history,
    accounts,
    now,
    settleMs: HOUR,
    copyToPostgres: async (a) => void copied.push(a),
  });
}

describe('the due month', () => {
  it('is the previous UTC month, once it has ended and settled', () => {
    expect(previousMonth(DEC)).toBe('2026-11');
    expect(previousMonth(Date.UTC(2027, 0, 15))).toBe('2026-12');
    expect(dueMonth(DEC - 1, HOUR)).toBe('2026-10'); // November has not ended: October is the month to settle
    expect(dueMonth(DEC + HOUR - 1, HOUR)).toBeNull();
    expect(dueMonth(DEC + HOUR, HOUR)).toBe('2026-11');
  });
});

describe('the SLA job', () => {
  it('before the month has ended (and settled): no credit', async () => {
    const a = job(() => DEC - 1);
    const b = job(() => DEC + HOUR - 1);
    // Before December: October is settled (no usage then, no credit); November is not looked at.
    expect((await a.round()).map((r) => [r.account, r.month, r.outcome.creditNano, r.result])).toEqual([
      ['below', '2026-10', 0, null],
      ['at', '2026-10', 0, null],
    ]);
    // In December before the settling hour: nothing.
    expect(await b.round()).toEqual([]);
    expect(await new RedisBilling(redis.client, redis.prefix).entries('below')).toEqual([]);
  });

  it('a month below target: one credit sla-2026-11 across two processes, rounds and restarts; at target: none', async () => {
    const copied: string[] = [];
    const [a, b] = [job(() => DEC + 2 * HOUR, copied), job(() => DEC + 2 * HOUR, copied)];
    const [ra, rb] = await Promise.all([a.round(), b.round()]);
    const below = [...ra, ...rb].filter((r) => r.account === 'below');
    expect(below.map((r) => r.result?.verdict).sort()).toEqual(['applied', 'duplicate-event']);
    expect(below[0]?.outcome.creditPercent).toBe(25); // 97% is below 99.0%, not below 95.0%
    expect(below[0]?.outcome.creditNano).toBe(1_000_000_000);
    const at = [...ra, ...rb].filter((r) => r.account === 'at');
    expect(at.map((r) => [r.outcome.uptime, r.outcome.creditNano, r.result])).toEqual([
      [1, 0, null],
      [1, 0, null],
    ]);
    expect([...ra, ...rb].some((r) => r.account === 'no-sla')).toBe(false);
    // Later rounds in the same processes skip the settled month; "restarted" processes (new jobs) find it applied.
    expect(await a.round()).toEqual([]);
    const restarted = [job(() => DEC + 30 * HOUR), job(() => Date.UTC(2026, 11, 20))];
    for (const j of restarted) expect((await j.round()).find((r) => r.account === 'below')?.result?.verdict).toBe('duplicate-event');
    const ledger = new RedisBilling(redis.client, redis.prefix);
    expect(await ledger.entries('below')).toEqual([{ kind: 'sla', reference: 'sla-2026-11', at: DEC - 1, eventId: 'sla-2026-11', deltaNano: 1_000_000_000 }]);
    expect(await ledger.entries('at')).toEqual([]);
    expect(await redis.client.hget(`${redis.prefix}:{a:below}:acct`, 'credited')).toBe('1000000000');
    expect(copied.every((c) => c === 'below')).toBe(true);
  });

  it('runs at start and on its timer, and stops cleanly', async () => {
    let now = DEC - HOUR;
    const client = new Redis(redis.url);
    clients.push(client);
    const settled: string[] = [];
    const running = startSlaJob({
      ledger: new RedisBilling(client, `${redis.prefix}-timer`),
      source,
      history,
      accounts,
      now: () => now,
      settleMs: 0,
      intervalMs: 50,
      onResult: (account, o, r) => settled.push(`${account} ${o.month} ${r?.verdict ?? 'none'}`),
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(settled.filter((s) => s.includes('2026-11'))).toEqual([]);
    now = DEC;
    await expect.poll(() => settled.filter((s) => s.includes('2026-11')).length, { timeout: 5000 }).toBe(2);
    await new Promise((r) => setTimeout(r, 200));
    await running.stop();
    expect(settled.filter((s) => s.includes('2026-11')).sort()).toEqual(['at 2026-11 none', 'below 2026-11 applied']);
    expect(settled).toHaveLength(4); // October once per account at start, November once: each month settled once per process
  });
});
