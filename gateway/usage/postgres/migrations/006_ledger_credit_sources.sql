-- Runtime ledger entries beside the config's credits: payments, refunds and disputes from Stripe (source 'stripe'),
-- SLA credits later (source 'sla'). They are copied from the Redis ledger, which applies each exactly once
-- (gateway/state/lua/billing.lua); credit_id is the Stripe event id (one row per applied step), reference the Stripe
-- object (cs_…, re_…, dp_…), amount_nano signed (refunds and disputes negative). account_ledger sums them as before.
ALTER TABLE ledger_credits DROP CONSTRAINT ledger_credits_kind_check;
ALTER TABLE ledger_credits ADD CONSTRAINT ledger_credits_kind_check
  CHECK (kind IN ('trial', 'credit', 'payment', 'refund', 'dispute', 'dispute-reinstated', 'sla'));
ALTER TABLE ledger_credits ADD COLUMN source text NOT NULL DEFAULT 'config' CHECK (source IN ('config', 'stripe', 'sla'));
ALTER TABLE ledger_credits ADD COLUMN reference text;
ALTER TABLE ledger_credits ADD COLUMN occurred_at timestamptz;
