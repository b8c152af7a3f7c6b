-- A refund debited when it succeeded and credited back when it later failed or was canceled (Stripe refund.failed,
-- refund.updated): kind 'refund-reversed', amount_nano positive, credit_id the Stripe event id, reference the re_….
ALTER TABLE ledger_credits DROP CONSTRAINT ledger_credits_kind_check;
ALTER TABLE ledger_credits ADD CONSTRAINT ledger_credits_kind_check
  CHECK (kind IN ('trial', 'credit', 'payment', 'refund', 'refund-reversed', 'dispute', 'dispute-reinstated', 'sla'));
