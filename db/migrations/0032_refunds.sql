-- Refunds (issue 18, item 7): money of a confirmed inbound credit paid back to the account it came
-- from, as an ordinary outbound transfer of the payment pipeline (origin 'refund', its id the
-- refund's). One row per refund of one credit. What is still refundable of a credit is its amount,
-- less the excess split off it (an overpayment, which triage refunds), less its refunds that are
-- pending or succeeded; a new refund is checked against it under a lock on the credit.
CREATE TABLE refunds (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  -- The partner's own reference (a request by intent or invoice gives it to each credit's refund),
  -- or Rail's for refunds it makes itself (escrow, triage).
  reference text NOT NULL CHECK (length(reference) BETWEEN 1 AND 200),
  request_hash text NOT NULL,
  credit_id uuid NOT NULL REFERENCES inbound_credits (id),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
  -- Who asked: the partner (the Refunds API), an escrow (its cancel or expiry), triage.
  origin_type text NOT NULL CHECK (origin_type IN ('partner', 'escrow', 'triage')),
  origin_id uuid,
  CHECK ((origin_type = 'escrow') = (origin_id IS NOT NULL)),
  -- The ledger account the payout is held on (collections, float, an escrow's holding, suspense).
  source_account_id uuid NOT NULL,
  outbound_transfer_id uuid REFERENCES outbound_transfers (id),
  reason text CHECK (length(reason) <= 200),
  failure_reason jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  CHECK ((state = 'pending') = (completed_at IS NULL)),
  CONSTRAINT refunds_once_per_reference UNIQUE (partner_id, reference, credit_id)
);

-- The refundable sum of a credit reads its live refunds.
CREATE INDEX refunds_by_credit ON refunds (credit_id) WHERE state <> 'failed';
-- The partner's list, newest first (ids are UUIDv7).
CREATE INDEX refunds_by_partner ON refunds (partner_id, id DESC);
CREATE UNIQUE INDEX refunds_by_outbound_transfer ON refunds (outbound_transfer_id);

-- The excess of an overpaid credit (a triage item of its own) names the credit it was split off,
-- so that the credit's refundable amount leaves it out. Excess rows recorded before have none.
ALTER TABLE inbound_credits ADD COLUMN excess_of uuid REFERENCES inbound_credits (id);
CREATE INDEX inbound_credits_by_excess_of ON inbound_credits (excess_of) WHERE excess_of IS NOT NULL;
