// Reconciliation: Redis's money (the working copy admission reads) against the Postgres ledger (the record), per
// account, every SVC_RECONCILE_SECONDS. Credits: Redis's `credited` against the sum of ledger_credits, after copying
// the credits and billing entries Redis applied (idempotent). Spend: Redis's `spent` against usage_daily, counting the
// events still in the account's stream (not exported yet) and leaving out the ones exported after the check began, so
// traffic during the check is no drift. A drift is measured twice in a row and reported only when both agree: as
// svc_money_drift_usd{account,field}, a log line naming the account and the amount, and in <p>:money:drift
// (gateway/contract/money-drift.ts), from which the operator's leader records a MoneyDrift Event on the Account.
import type pg from 'pg';
import { Counter, Gauge, type Registry } from 'prom-client';
import { driftLogMessage, driftRecordJson, type Drift, type DriftField } from '../../contract/money-drift.ts';
import { accountKeys, redisKeys } from '../../contract/redis-keys.ts';
import { snapshot as snapshotSchema } from '../../contract/snapshot.ts';
import { RedisBilling } from '../../state/billing-ledger.ts';
import type { RedisClient } from '../../state/redis-connect.ts';
import { recordBillingEntries } from '../postgres/billing-credits.ts';
import { syncCredits } from './credit-sync.ts';
import type { Log } from './log.ts';
import { entryEvents } from '../event-schema.ts';

export type { Drift, DriftField };

/** The published findings outlive a few missed checks, then expire (an exporter gone reports nothing stale). */
const PUBLISHED_CHECKS = 3;
const PUBLISHED_MIN_MS = 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const RECORD = `
SELECT (SELECT coalesce(sum(amount_nano), 0) FROM ledger_credits WHERE account = $1)::text AS credited,
       (SELECT coalesce(sum(cost_nano), 0) FROM usage_daily WHERE account = $1)::text AS spent,
       (SELECT coalesce(sum(cost_nano), 0) FROM usage_events WHERE account = $1
          AND (event_id = ANY($3::uuid[]) OR (created_at > $2::timestamptz - interval '1 hour' AND exported_at > $2::timestamptz)))::text AS moving`;

interface RedisSide {
  live: boolean;
  credited: number;
  spent: number;
  streamIds: string[];
  streamNano: number;
}

/** One consistent read of the account's money and its stream (one MULTI in the account's slot). */
async function readRedis(redis: RedisClient, prefix: string, account: string): Promise<RedisSide> {
  const k = accountKeys(prefix, account);
  const res = await redis.multi().hmget(k.acct, 'trial', 'credited', 'spent').xrange(k.usage, '-', '+').exec();
  const [[e1, acct], [e2, entries]] = (res ?? []) as Array<[Error | null, unknown]> as [[Error | null, unknown], [Error | null, unknown]];
  if (e1 || e2) throw e1 ?? e2;
  const [trial, credited, spent] = acct as Array<string | null>;
  const ids: string[] = [];
  let nano = 0;
  for (const [, fields] of entries as Array<[string, string[]]>) {
    // A malformed entry is the exporter's dead letter, not money (entryEvents reads it as none).
    for (const raw of entryEvents(fields)) {
      const e = (raw ?? {}) as { eventId?: unknown; costNano?: unknown };
      if (typeof e.eventId === 'string' && UUID.test(e.eventId)) ids.push(e.eventId);
      if (typeof e.costNano === 'number') nano += e.costNano;
    }
  }
  return { live: trial !== null, credited: Number(credited ?? 0), spent: Number(spent ?? 0), streamIds: ids, streamNano: nano };
}

/** The account's drift now: [credited, spent] (0 when they agree); null when its money is not in Redis (rebuilding). */
export async function measureDrift(redis: RedisClient, pool: pg.Pool, prefix: string, account: string): Promise<[number, number] | null> {
  const since = (await pool.query<{ t: string }>('SELECT now()::text AS t')).rows[0]?.t as string;
  const r = await readRedis(redis, prefix, account);
  if (!r.live) return null;
  const row = (await pool.query<{ credited: string; spent: string; moving: string }>(RECORD, [account, since, r.streamIds])).rows[0];
  const recordSpent = Number(row?.spent ?? 0) - Number(row?.moving ?? 0) + r.streamNano;
  return [r.credited - Number(row?.credited ?? 0), r.spent - recordSpent];
}

export interface ReconcilerOptions {
  redis: RedisClient;
  pool: pg.Pool;
  prefix: string;
  registry: Registry;
  log: Log;
  everyMs: number;
}

export class MoneyReconciler {
  private readonly o: ReconcilerOptions;
  private readonly drift: Gauge<'account' | 'field'>;
  private readonly runs: Counter<'result'>;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<Drift[]> | null = null;
  private publishWarned = false;

  constructor(o: ReconcilerOptions) {
    this.o = o;
    this.drift = new Gauge({
      name: 'svc_money_drift_usd',
      help: "Redis's money minus the Postgres ledger's, per account: credited or spent (0 when they agree; the reconciliation of the usage exporter).",
      labelNames: ['account', 'field'],
      registers: [o.registry],
    });
    this.runs = new Counter({
      name: 'svc_money_reconcile_runs_total',
      help: 'Reconciliations of Redis money against the Postgres ledger, by result (ok, drift, error).',
      labelNames: ['result'],
      registers: [o.registry],
    });
  }

  start(): void {
    this.timer ??= setInterval(() => void this.run().catch(() => {}), this.o.everyMs).unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  /** One check of every account the config names (one at a time: never more than one check runs). */
  run(): Promise<Drift[]> {
    this.running ??= this.check()
      .then(
        (d) => {
          this.runs.inc({ result: d.length > 0 ? 'drift' : 'ok' });
          return d;
        },
        (err: unknown) => {
          this.runs.inc({ result: 'error' });
          this.o.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'Money reconciliation failed; retried at the next interval');
          throw err;
        },
      )
      .finally(() => (this.running = null));
    return this.running;
  }

  private async check(): Promise<Drift[]> {
    const { redis, pool, prefix } = this.o;
    const raw = await redis.get(redisKeys(prefix).appliedSnapshot);
    if (!raw) return [];
    await syncCredits(redis, pool, prefix);
    const billing = new RedisBilling(redis, prefix);
    const found: Drift[] = [];
    for (const account of Object.keys(snapshotSchema.parse(JSON.parse(raw)).accounts).sort()) {
      await recordBillingEntries(pool, account, await billing.entries(account));
      const first = await measureDrift(redis, pool, prefix, account);
      // Measured again when not 0: a drift is an offset that stays, a race with traffic is not.
      const second = first && (first[0] !== 0 || first[1] !== 0) ? await measureDrift(redis, pool, prefix, account) : first;
      if (!first || !second) continue;
      (['credited', 'spent'] as const).forEach((field, i) => {
        const d = first[i] === second[i] ? (second[i] as number) : 0;
        this.drift.set({ account, field }, d / 1e9);
        if (d === 0) return;
        const drift: Drift = { account, field, driftNano: d };
        found.push(drift);
        this.o.log.error({ account, field, driftNano: d, driftUsd: d / 1e9 }, driftLogMessage(drift));
      });
    }
    // For the operator's leader (it has Kubernetes access): the Events on the Accounts. Best effort: a Redis user made
    // before this key existed may not write it; the metric and the log line above still tell the drift.
    const ttl = Math.max(PUBLISHED_CHECKS * this.o.everyMs, PUBLISHED_MIN_MS);
    try {
      await redis.set(redisKeys(prefix).moneyDrift, driftRecordJson(found, new Date()), 'PX', ttl);
    } catch (err) {
      if (!this.publishWarned) {
        this.publishWarned = true;
        this.o.log.warn(
          { err: err instanceof Error ? err.message : String(err), key: redisKeys(prefix).moneyDrift },
          "Could not publish the drift for the operator's MoneyDrift Events (may the exporter's Redis user SET this key?); the metric and the log still report it",
        );
      }
    }
    return found;
  }
}
