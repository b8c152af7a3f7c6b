// The billing backend for the standalone process (its own store: memory or Redis) and for the cluster console (the
// gateways' Redis): the same ledger rules either way (gateway/state/billing-ledger.ts).
import { redisKeys } from '../gateway/contract/redis-keys.ts';
import type { RedisClient as Redis } from '../gateway/state/redis-connect.ts';
import type { Snapshot } from '../gateway/contract/snapshot.ts';
import { MemoryBilling, RedisBilling, type BillingLedger } from '../gateway/state/billing-ledger.ts';
import type { MemoryStore } from '../gateway/state/memory-store.ts';
import type { RedisStore } from '../gateway/state/redis-store.ts';
import { recordBillingEntries } from '../gateway/usage/postgres/billing-credits.ts';
import { createPool } from '../gateway/usage/postgres/pool.ts';
import { accountKeys } from '../gateway/state/redis-store.ts';
import type { UsageEvent } from '../gateway/usage/event.ts';
import type { BillingBackend, ConfigCredit } from './backend.ts';
import type { SlaJobOptions } from './sla/sla-job.ts';
import { MemoryStatementSource, PostgresStatementSource } from './statements/statement-source.ts';
import type { StatementSource } from './statements/statement.ts';
import { stripeSettings } from './settings.ts';
import { StripeClient } from './payments/stripe-client.ts';

type Env = Record<string, string | undefined>;

function creditsOf(snapshot: Pick<Snapshot, 'accounts'> | null, account: string): ConfigCredit[] {
  const a = snapshot?.accounts[account];
  if (!a) return [];
  return [
    { kind: 'trial', reference: '', amountNano: a.trialCreditNano },
    ...a.credits.map((c) => ({ kind: 'credit' as const, reference: c.id, amountNano: c.amountNano })),
  ];
}

/** The Stripe client and secret from the settings; with DATABASE_URL, the copy of applied entries (payments, SLA credits) to Postgres. */
function stripeParts(env: Env, ledger: BillingLedger): Pick<BillingBackend, 'stripe' | 'webhookSecret' | 'ledger' | 'copyToPostgres' | 'close'> {
  const s = stripeSettings(env);
  const base = { stripe: s ? new StripeClient(s) : null, webhookSecret: s?.webhookSecret ?? null, ledger };
  if (!env.DATABASE_URL) return base;
  const pool = createPool(env.DATABASE_URL, { max: 1, statementTimeoutMs: 5000 });
  pool.on('error', () => {});
  return {
    ...base,
    copyToPostgres: async (account) => void (await recordBillingEntries(pool, account, await ledger.entries(account))),
    close: () => pool.end().catch(() => {}),
  };
}

/** Statements from Postgres with DATABASE_URL (their own small pool), else from `memory` when given. */
function statementParts(env: Env, memory: (() => StatementSource) | null): Pick<BillingBackend, 'statements'> & { end?: () => Promise<void> } {
  if (env.DATABASE_URL) {
    const pool = createPool(env.DATABASE_URL, { max: 1, statementTimeoutMs: 15_000 });
    pool.on('error', () => {});
    return { statements: new PostgresStatementSource(pool), end: () => pool.end().catch(() => {}) };
  }
  return memory ? { statements: memory() } : {};
}

/** The SLA job's inputs from a billing backend (null without statements: nothing to measure the spend on). */
export function slaJobInputs(b: BillingBackend): Pick<SlaJobOptions, 'ledger' | 'source' | 'accounts' | 'copyToPostgres'> | null {
  if (!b.statements || !b.billingAccounts) return null;
  return { ledger: b.ledger, source: b.statements, accounts: b.billingAccounts, copyToPostgres: b.copyToPostgres };
}

function withStatements(base: BillingBackend, st: ReturnType<typeof statementParts>): BillingBackend {
  const close = base.close;
  return { ...base, statements: st.statements, close: async () => void (await Promise.all([close?.(), st.end?.()])) };
}

export function standaloneBilling(
  env: Env,
  snapshot: Snapshot,
  backing: { kind: 'memory'; store: MemoryStore } | { kind: 'redis'; store: RedisStore },
  events?: (account: string) => Promise<Iterable<UsageEvent>>,
): BillingBackend {
  const store = backing.store;
  const base: BillingBackend = {
    ...stripeParts(env, backing.kind === 'memory' ? new MemoryBilling(backing.store) : new RedisBilling(backing.store.redis, backing.store.prefix)),
    balanceNano: async (account) => (await store.view(account, '', Date.now())).balanceNano,
    configCredits: async (account) => creditsOf(snapshot, account),
    accountExists: async (account) => Object.hasOwn(snapshot.accounts, account),
    accountBilling: async (account) => snapshot.accounts[account]?.billing ?? null,
    billingAccounts: async () => Object.entries(snapshot.accounts).map(([account, a]) => ({ account, billing: a.billing ?? null })),
  };
  const startedAt = Date.now();
  return withStatements(
    base,
    statementParts(
      env,
      events
        ? () =>
            new MemoryStatementSource({
              events,
              startedAt,
              configCredits: base.configCredits,
              entries: (a) => base.ledger.entries(a),
            })
        : null,
    ),
  );
}

export function clusterBilling(env: Env, redis: Redis, prefix: string, accounts: () => Promise<string[]>): BillingBackend {
  const snapshot = async (): Promise<Pick<Snapshot, 'accounts'> | null> => {
    const raw = await redis.get(redisKeys(prefix).appliedSnapshot);
    return raw ? (JSON.parse(raw) as Pick<Snapshot, 'accounts'>) : null;
  };
  return withStatements(
    {
      ...stripeParts(env, new RedisBilling(redis, prefix)),
      balanceNano: async (account) => {
        const [credited, spent] = await redis.hmget(accountKeys(prefix, account).acct, 'credited', 'spent');
        return Number(credited ?? 0) - Number(spent ?? 0);
      },
      configCredits: async (account) => creditsOf(await snapshot(), account),
      accountExists: async (account) => (await accounts()).includes(account),
      accountBilling: async (account) => (await snapshot())?.accounts[account]?.billing ?? null,
      billingAccounts: async () => Object.entries((await snapshot())?.accounts ?? {}).map(([account, a]) => ({ account, billing: a.billing ?? null })),
    },
    statementParts(env, null),
  );
}
