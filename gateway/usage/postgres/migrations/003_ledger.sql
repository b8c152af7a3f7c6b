-- The money ledger per account. Credits come from the config (Account.spec.trialCreditUsd and credits[], as
-- compiled into the snapshot): each is recorded once by (account, kind, credit_id), the same rule the state
-- store applies, so a later edit of an applied credit's amount changes neither. Settled costs come from the
-- usage events (through usage_daily). Balance = credited - spent, as the store's ledger computes it.
CREATE TABLE ledger_credits (
  account     text        NOT NULL,
  kind        text        NOT NULL CHECK (kind IN ('trial', 'credit')),
  credit_id   text        NOT NULL,  -- '' for the trial credit
  amount_nano bigint      NOT NULL,
  amount_usd  numeric(20, 9) GENERATED ALWAYS AS (amount_nano::numeric / 1000000000) STORED,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account, kind, credit_id)
);

CREATE VIEW account_ledger AS
WITH c AS (SELECT account, sum(amount_nano) AS credited_nano FROM ledger_credits GROUP BY account),
     s AS (SELECT account, sum(cost_nano) AS spent_nano, sum(fee_nano) AS fee_nano, sum(requests) AS requests
           FROM usage_daily GROUP BY account)
SELECT account,
       coalesce(c.credited_nano, 0) AS credited_nano,
       coalesce(s.spent_nano, 0) AS spent_nano,
       coalesce(s.fee_nano, 0) AS fee_nano,
       coalesce(c.credited_nano, 0) - coalesce(s.spent_nano, 0) AS balance_nano,
       ((coalesce(c.credited_nano, 0) - coalesce(s.spent_nano, 0))::numeric / 1000000000)::numeric(20, 9) AS balance_usd,
       coalesce(s.requests, 0) AS requests
FROM c FULL JOIN s USING (account);

-- A statement: credits as they were recorded, and settled spend per UTC day.
CREATE VIEW account_statement AS
SELECT account, recorded_at::date AS day, kind AS entry, NULLIF(credit_id, '') AS reference, amount_nano
FROM ledger_credits
UNION ALL
SELECT account, day, 'usage', NULL, -sum(cost_nano)
FROM usage_daily GROUP BY account, day;
