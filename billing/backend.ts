// What the billing page and the webhook need, wherever the console runs: the Stripe client (null when payments are
// not set up), the payments ledger, the balance, and the credits from the config (trial, Account.spec.credits[]).
import type { BillingLedger } from '../gateway/state/billing-ledger.ts';
import type { AccountBilling, StatementSource } from './statements/statement.ts';
import type { StripeClient } from './payments/stripe-client.ts';

export interface ConfigCredit {
  kind: 'trial' | 'credit';
  reference: string;
  amountNano: number;
}

export interface BillingBackend {
  stripe: StripeClient | null;
  webhookSecret: string | null;
  ledger: BillingLedger;
  balanceNano(account: string): Promise<number>;
  configCredits(account: string): Promise<ConfigCredit[]>;
  accountExists(account: string): Promise<boolean>;
  /** With DATABASE_URL: copies the account's applied entries to Postgres ledger_credits (idempotent). */
  copyToPostgres?(account: string): Promise<void>;
  /** Monthly statements: Postgres with DATABASE_URL, else what the process holds (absent: no statements). */
  statements?: StatementSource;
  /** Account.spec.billing as compiled (null when the account has none). */
  accountBilling?(account: string): Promise<AccountBilling | null>;
  /** Every account with its Account.spec.billing, for the SLA job (billing/sla/sla-job.ts). */
  billingAccounts?(): Promise<Array<{ account: string; billing: AccountBilling | null }>>;
  close?(): Promise<void>;
}

/** Add credits: whole or cent amounts from 5 to 10,000 USD. */
export const MIN_CENTS = 500;
export const MAX_CENTS = 1_000_000;

export function parseUsdCents(input: string | undefined): { cents: number } | { error: string } {
  const s = (input ?? '').trim();
  const m = /^(\d{1,7})(?:\.(\d{1,2}))?$/.exec(s);
  if (!m) return { error: 'Enter an amount in US dollars, like 25 or 25.50.' };
  const cents = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  if (cents < MIN_CENTS || cents > MAX_CENTS) return { error: `Enter an amount from $${MIN_CENTS / 100} to $${(MAX_CENTS / 100).toLocaleString('en-US')}.` };
  return { cents };
}
