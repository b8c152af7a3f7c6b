// Traffic through 3 gateway processes while a test breaks their Redis, and what it cost: how long calls failed (and
// that they failed fast with 503 store_unavailable), calls charged twice or not at all, holds left open, usage events
// lost, and whether RPM or a monthly budget was exceeded. Shared by the Redis Cluster failover test and the standalone
// replica promotion test (reliability case 16).
import type { RedisStore } from '../../gateway/state/redis-store.ts';
import type { UsageEvent } from '../../gateway/usage/event.ts';
import { setup } from '../billing/fixtures.ts';
import { chat, countBy, type CallResult } from './fleet.ts';

export const RPM = 60;
export const BUDGET_NANO = 600_000; // about 30 calls of mock-fast
export const s = setup(
  [{ name: 'acme', spec: { trialCreditUsd: 1000 } }],
  [
    { name: 'traffic', account: 'acme' },
    { name: 'rpm', account: 'acme', spec: { limits: { rpm: RPM } } },
    { name: 'budget', account: 'acme', spec: { monthlyBudgetUsd: BUDGET_NANO / 1e9 } },
  ],
);

interface Call extends CallResult {
  key: string;
  code: string | null;
}

export interface Figures {
  calls: number;
  statuses: Record<string, number>;
  outageMs: number;
  maxMs: number;
  failedOther: number;
  duplicated: number;
  uncharged: number;
  chargedWithoutAnswer: number;
  openHolds: number;
  heldNano: number;
  ledgerMinusEvents: number;
  rpmAccepted: number;
  budgetSpentNano: number;
  /** Holds still open once the hold TTL has passed and the account was used again (reclaimed). */
  openHoldsAfterTtl: number;
  /** Calls per second over the 3 gateways before the kill (healthy cluster). */
  callsPerSecond: number;
}

function errorCode(body: string): string | null {
  try {
    return (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? null;
  } catch {
    return null;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Scenario {
  /** Gateway URLs (3 processes) and a store on the same Redis, for the ledger. */
  urls: string[];
  store: RedisStore;
  /** Breaks Redis; resolves when the test considers it repaired. */
  fault: () => Promise<void>;
  /** After the repair, before the traffic stops (e.g. a killed node rejoins). */
  afterRepair?: () => Promise<void>;
  /** The gateways' SVC_HOLD_TTL_SECONDS. */
  holdTtlMs: number;
}

export async function trafficThrough(name: string, sc: Scenario): Promise<Figures> {
  const { urls, store } = sc;
  const calls: Call[] = [];
  let stop = false;
  const worker = async (key: string, i: number, pauseMs: number): Promise<void> => {
    for (let n = 0; !stop && n < 100_000; n++) {
      const r = await chat(urls[(i + n) % urls.length] as string, s.keys[key] as string).catch((err: unknown) => ({
        status: 0,
        retryAfter: null,
        startedAt: Date.now(),
        ms: 0,
        body: String(err),
      }));
      calls.push({ ...r, key, code: errorCode(r.body) });
      if (pauseMs) await sleep(pauseMs);
    }
  };
  const workers = [
    ...Array.from({ length: 6 }, (_, i) => worker('traffic', i, 0)),
    ...Array.from({ length: 3 }, (_, i) => worker('rpm', i, 10)),
    ...Array.from({ length: 3 }, (_, i) => worker('budget', i, 60)),
  ];
  const t0 = Date.now();
  await sleep(2500);
  const before = calls.filter((c) => c.startedAt + c.ms <= Date.now()).length;
  const callsPerSecond = Math.round(before / ((Date.now() - t0) / 1000));
  const killedAt = Date.now();
  await sc.fault();
  const healthyAt = Date.now();
  await sc.afterRepair?.();
  await sleep(4000);
  stop = true;
  await Promise.all(workers);
  const stoppedAt = Date.now();
  // Settles run after the answers (and are retried while Redis is away): wait for the holds, bounded.
  for (let i = 0; i < 150 && (await store.ledger('acme').catch(() => ({ openHolds: 1 }))).openHolds > 0; i++) await sleep(100);
  const { openHolds, heldNano } = await store.ledger('acme');
  // Past the hold TTL, the next call on the account reclaims what no gateway will settle.
  await sleep(Math.max(0, stoppedAt + sc.holdTtlMs + 500 - Date.now()));
  calls.push({ ...(await chat(urls[0] as string, s.keys.traffic as string)), key: 'traffic', code: null });
  for (let i = 0; i < 50 && (await store.ledger('acme')).openHolds > 0; i++) await sleep(100);
  const ledger = await store.ledger('acme');
  const openHoldsAfterTtl = ledger.openHolds;
  const events: UsageEvent[] = await store.usageEvents('acme');
  const ids = new Set(events.map((e) => e.eventId));
  const failed = calls.filter((c) => c.status === 503 || c.status === 0 || c.status >= 500);
  const ok = (key: string): number => calls.filter((c) => c.key === key && c.status === 200).length;
  const okEvents = (key: string): UsageEvent[] => events.filter((e) => e.apiKey === key && e.status === 200);
  const answered200 = ok('traffic') + ok('rpm') + ok('budget');
  const charged200 = okEvents('traffic').length + okEvents('rpm').length + okEvents('budget').length;
  const f: Figures = {
    calls: calls.length,
    statuses: countBy(calls, (c) => `${c.status}${c.code ? ` ${c.code}` : ''}`),
    outageMs: failed.length === 0 ? 0 : Math.max(...failed.map((c) => c.startedAt + c.ms)) - Math.min(...failed.map((c) => c.startedAt)),
    maxMs: Math.max(...calls.map((c) => c.ms)),
    failedOther: failed.filter((c) => !(c.status === 503 && c.code === 'store_unavailable' && c.retryAfter)).length,
    duplicated: events.length - ids.size,
    uncharged: Math.max(0, answered200 - charged200),
    chargedWithoutAnswer: Math.max(0, charged200 - answered200),
    openHolds,
    heldNano,
    ledgerMinusEvents: ledger.spentNano - events.reduce((sum, e) => sum + e.costNano, 0),
    rpmAccepted: ok('rpm'),
    budgetSpentNano: okEvents('budget').reduce((sum, e) => sum + e.costNano, 0),
    openHoldsAfterTtl,
    callsPerSecond,
  };
  console.log(`${name}: Redis repaired after ${healthyAt - killedAt} ms: ${JSON.stringify(f)}`);
  return f;
}
