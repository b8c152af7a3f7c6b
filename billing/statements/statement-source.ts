// A statement's figures. From Postgres: usage_daily (the rollup the usage page reads; a month of an account is a few
// thousand rows at most) and ledger_credits (config credits, payments, refunds, disputes, SLA credits; a credit counts
// at the time the money moved, occurred_at, else when it was recorded). From memory (standalone without
// DATABASE_URL): the usage events the process holds, the config credits as of the process's start, and the
// payments ledger's entries.
import type pg from 'pg';
import type { UsageEvent } from '../../gateway/usage/event.ts';
import { isSearchUnits, kindOf, type Kind } from '../../gateway/usage/kind.ts';
import type { AppliedEntry } from '../../gateway/state/billing-ledger.ts';
import type { ConfigCredit } from '../backend.ts';
import { monthRange, type CreditRow, type StatementData, type StatementSource, type UsageRow } from './statement.ts';

const OPENING = `
SELECT (coalesce((SELECT sum(amount_nano) FROM ledger_credits
                  WHERE account = $1 AND coalesce(occurred_at, recorded_at) < $2::timestamptz), 0)
      - coalesce((SELECT sum(cost_nano) FROM usage_daily WHERE account = $1 AND day < $2::date), 0))::text AS opening`;

const CREDITS = `
SELECT to_char(coalesce(occurred_at, recorded_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS at, kind,
       coalesce(reference, NULLIF(credit_id, ''), kind) AS reference, amount_nano::text AS amount_nano
FROM ledger_credits
WHERE account = $1 AND coalesce(occurred_at, recorded_at) >= $2::timestamptz AND coalesce(occurred_at, recorded_at) < $3::timestamptz
ORDER BY 1, 3`;

const USAGE = `
SELECT CASE WHEN served_model = '' THEN requested_model ELSE served_model END AS model, api_key, task_type, kind,
       sum(requests)::text AS requests, sum(input_tokens)::text AS input_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE kind <> 'rerank'), 0)::text AS output_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE kind = 'rerank'), 0)::text AS search_units,
       sum(cost_nano)::text AS cost_nano, sum(fee_nano)::text AS fee_nano,
       sum(cache_hits)::text AS cache_hits, sum(cache_saved_nano)::text AS cache_saved_nano,
       sum(billed_seconds)::text AS audio_seconds, sum(billed_characters)::text AS characters, sum(billed_images)::text AS images,
       sum(batch_requests)::text AS batch_requests, sum(batch_cost_nano)::text AS batch_cost_nano
FROM usage_daily
WHERE account = $1 AND day >= $2::date AND day < $3::date
GROUP BY 1, 2, 3, 4`;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class PostgresStatementSource implements StatementSource {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async month(account: string, month: string): Promise<StatementData> {
    const r = monthRange(month);
    if (!r) throw new RangeError(`month must be YYYY-MM, got ${month}`);
    const [o, c, u] = await Promise.all([
      this.pool.query<{ opening: string }>(OPENING, [account, iso(r.start)]),
      this.pool.query<Record<string, string>>(CREDITS, [account, iso(r.start), iso(r.end)]),
      this.pool.query<Record<string, string>>(USAGE, [account, r.from, iso(r.end).slice(0, 10)]),
    ]);
    return {
      openingNano: Number(o.rows[0]?.opening ?? 0),
      credits: c.rows.map((x) => ({ at: x.at as string, kind: x.kind as string, reference: x.reference as string, amountNano: Number(x.amount_nano) })),
      usage: u.rows.map((x) => ({
        model: x.model as string,
        apiKey: x.api_key as string,
        taskType: x.task_type as string,
        kind: x.kind as Kind | '',
        requests: Number(x.requests),
        inputTokens: Number(x.input_tokens),
        outputTokens: Number(x.output_tokens),
        searchUnits: Number(x.search_units),
        costNano: Number(x.cost_nano),
        feeNano: Number(x.fee_nano),
        cacheHits: Number(x.cache_hits),
        cacheSavedNano: Number(x.cache_saved_nano),
        audioSeconds: Number(x.audio_seconds),
        characters: Number(x.characters),
        images: Number(x.images),
        batchRequests: Number(x.batch_requests),
        batchCostNano: Number(x.batch_cost_nano),
      })),
    };
  }
}

export interface MemoryStatementInputs {
  events: (account: string) => Promise<Iterable<UsageEvent>>;
  configCredits: (account: string) => Promise<ConfigCredit[]>;
  entries: (account: string) => Promise<AppliedEntry[]>;
  /** When the config credits were applied (the process's start), ms. */
  startedAt: number;
}

/** Standalone without Postgres: only what this process saw since it started. */
export class MemoryStatementSource implements StatementSource {
  private readonly i: MemoryStatementInputs;

  constructor(inputs: MemoryStatementInputs) {
    this.i = inputs;
  }

  async month(account: string, month: string): Promise<StatementData> {
    const r = monthRange(month);
    if (!r) throw new RangeError(`month must be YYYY-MM, got ${month}`);
    let openingNano = 0;
    const credits: CreditRow[] = [];
    const add = (at: number, kind: string, reference: string, amountNano: number): void => {
      if (amountNano === 0) return;
      if (at < r.start) openingNano += amountNano;
      else if (at < r.end) credits.push({ at: iso(at), kind, reference: reference || kind, amountNano });
    };
    for (const c of await this.i.configCredits(account)) add(this.i.startedAt, c.kind, c.reference, c.amountNano);
    for (const e of await this.i.entries(account)) add(e.at, e.kind, e.reference, e.deltaNano);
    const usage = new Map<string, UsageRow>();
    for (const e of await this.i.events(account)) {
      if (e.account !== account) continue;
      const at = Date.parse(e.createdAt);
      if (at < r.start) {
        openingNano -= e.costNano;
        continue;
      }
      if (at >= r.end) continue;
      const model = e.servedModel || e.requestedModel;
      const taskType = e.taskType ?? '';
      const kind = kindOf(e.endpoint);
      const id = `${model}\u0000${e.apiKey}\u0000${taskType}\u0000${kind}`;
      let u = usage.get(id);
      if (!u)
        usage.set(
          id,
          (u = {
            model,
            apiKey: e.apiKey,
            taskType,
            kind,
            requests: 0,
            inputTokens: 0,
            outputTokens: 0,
            searchUnits: 0,
            costNano: 0,
            feeNano: 0,
            cacheHits: 0,
            cacheSavedNano: 0,
            audioSeconds: 0,
            characters: 0,
            images: 0,
            batchRequests: 0,
            batchCostNano: 0,
          }),
        );
      u.requests += 1;
      u.inputTokens += e.inputTokens;
      if (isSearchUnits(kind)) u.searchUnits = (u.searchUnits ?? 0) + e.outputTokens;
      else u.outputTokens += e.outputTokens;
      u.costNano += e.costNano;
      u.feeNano += e.feeNano;
      if (e.cache === 'hit') u.cacheHits = (u.cacheHits ?? 0) + 1;
      u.cacheSavedNano = (u.cacheSavedNano ?? 0) + (e.cacheSavedNano ?? 0);
      if (e.unit === 'seconds') u.audioSeconds = (u.audioSeconds ?? 0) + (e.units ?? 0);
      if (e.unit === 'characters') u.characters = (u.characters ?? 0) + (e.units ?? 0);
      if (e.unit === 'images') u.images = (u.images ?? 0) + (e.units ?? 0);
      if (e.batch) {
        u.batchRequests = (u.batchRequests ?? 0) + 1;
        u.batchCostNano = (u.batchCostNano ?? 0) + e.costNano;
      }
    }
    return { openingNano, credits, usage: [...usage.values()] };
  }
}
