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

-- Triage refunds made before refunds had rows: a payout of origin 'refund' whose origin_id is the
-- unmatched credit itself. Each becomes a refund of origin triage (the payout's amount, held on the
-- payout's source account, the payout's client reference as its reference, its state the
-- payout's: confirmed → succeeded, failed → failed, else pending), and the payout names it. A
-- payout still in flight then ends its refund, and the credit (refund_pending) with it; else it
-- would stay refund_pending for ever, and a failed payout's money in suspense with no retry.
-- A backfilled refund takes its payout's id (a UUIDv7 of when it was made: lists keep their
-- order); its request_hash matches no request, so the reference answers no replay. One statement,
-- which finds only payouts without a refund (the test runs it again over rows made the old way).
-- backfill triage refunds: begin
WITH old_payouts AS (
  SELECT t.* FROM outbound_transfers t
   WHERE t.origin_type = 'refund' AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.id = t.origin_id)
     FOR UPDATE
), backfilled AS (
  INSERT INTO refunds (id, partner_id, reference, request_hash, credit_id, amount_kobo, currency, state, origin_type, origin_id,
                       source_account_id, outbound_transfer_id, failure_reason, created_at, completed_at)
  SELECT t.id, t.partner_id, t.client_reference, 'backfilled: triage refund made before refunds', t.origin_id, t.amount_kobo, t.currency,
         CASE t.state WHEN 'confirmed' THEN 'succeeded' WHEN 'failed' THEN 'failed' ELSE 'pending' END,
         'triage', NULL,
         t.source_account_id, -- the partner's suspense account (recorded since origins were, in 0025)
         t.id,
         CASE WHEN t.state = 'failed' THEN COALESCE(t.failure_reason, '{"code": "payout_failed", "message": "The bank did not pay the refund"}') END,
         t.created_at,
         CASE WHEN t.state IN ('confirmed', 'failed') THEN COALESCE(t.terminal_at, t.state_changed_at) END
    FROM old_payouts t
  RETURNING id, credit_id, reference, outbound_transfer_id
), repointed AS (
  UPDATE outbound_transfers t SET origin_id = b.id, origin_reference = b.reference
    FROM backfilled b WHERE t.id = b.outbound_transfer_id
  RETURNING t.id
)
-- The credit's resolution names its refund, as triage's refunds now do.
UPDATE inbound_credits c SET resolution = c.resolution || jsonb_build_object('refundId', b.id)
  FROM backfilled b
 WHERE c.id = b.credit_id AND c.resolution->>'outboundTransferId' = b.outbound_transfer_id::text;
-- backfill triage refunds: end
