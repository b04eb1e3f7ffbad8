-- Escrow money out (issue 18): a released escrow is disbursed — an outbound transfer of the payment
-- pipeline to the recipient's bank account, or a credit to the partner's float — and a cancelled or
-- expired escrow (and an overfunded one's excess) is refunded credit by credit to the accounts the
-- money came from. Nothing is parked in a payable account any more.

-- The destination given at create or release (all three or none: none is the partner's float), and
-- the disbursement made at release: its state, its payout, why it failed.
ALTER TABLE escrows
  ADD COLUMN disbursement_account_number text CHECK (disbursement_account_number ~ '^[0-9]{10}$'),
  ADD COLUMN disbursement_bank_code text CHECK (disbursement_bank_code ~ '^[0-9]{3,6}$'),
  ADD COLUMN disbursement_account_name text CHECK (length(disbursement_account_name) BETWEEN 1 AND 100),
  ADD COLUMN disbursement_state text CHECK (disbursement_state IN ('pending', 'paid', 'failed')),
  ADD COLUMN disbursement_outbound_transfer_id uuid REFERENCES outbound_transfers (id),
  ADD COLUMN disbursement_failure_reason jsonb,
  ADD COLUMN disbursement_attempts integer NOT NULL DEFAULT 0 CHECK (disbursement_attempts >= 0),
  ADD COLUMN refund_state text CHECK (refund_state IN ('pending', 'refunded', 'failed')),
  ADD CONSTRAINT escrows_disbursement_destination_whole CHECK (
    (disbursement_account_number IS NULL) = (disbursement_bank_code IS NULL)
    AND (disbursement_account_number IS NULL) = (disbursement_account_name IS NULL)),
  -- Only a released escrow is disbursed; a bank disbursement that ended names its payout.
  ADD CONSTRAINT escrows_disbursed_when_released CHECK ((disbursement_state IS NULL) OR (status = 'released')),
  ADD CONSTRAINT escrows_disbursement_payout CHECK (
    disbursement_state IS NULL OR disbursement_state = 'pending' OR disbursement_account_number IS NULL OR disbursement_outbound_transfer_id IS NOT NULL);

-- The credits that funded an escrow, each as applied: what a refund pays back, and to whom.
CREATE TABLE escrow_funding_credits (
  escrow_id uuid NOT NULL REFERENCES escrows (id),
  credit_id uuid NOT NULL REFERENCES inbound_credits (id),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  applied_at timestamptz NOT NULL,
  -- The order credits were applied in (they serialise on the escrow's row): the last one is the
  -- credit that overfunded it, whatever the clock says.
  applied_order bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (escrow_id, credit_id)
);

-- The refunds of an escrow, one per funding credit (the excess of an overfunded escrow: one, from
-- the credit that overfunded it), as the refunds core made them; their state follows its outcome.
CREATE TABLE escrow_refunds (
  refund_id uuid PRIMARY KEY,
  escrow_id uuid NOT NULL REFERENCES escrows (id),
  credit_id uuid NOT NULL REFERENCES inbound_credits (id),
  purpose text NOT NULL CHECK (purpose IN ('refund', 'excess_refund')),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
  outbound_transfer_id uuid,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX escrow_refunds_by_escrow ON escrow_refunds (escrow_id, created_at);

-- Legacy, kept for operators: before disbursement existed, a release moved the amount to the
-- escrow's recipient payable account and a cancel or expiry to its payer refund account, and
-- nothing paid those accounts out. The columns are no longer written; on a database with such
-- escrows they are the only link from the money still in those payables to its escrow
-- (docs/escrow.md "Money released or refunded before disbursement").
COMMENT ON COLUMN escrows.recipient_payable_account_id IS
  'Legacy (no longer written): the payable account a release before disbursement existed moved the amount to; an operator pays out any balance left there (docs/escrow.md).';
COMMENT ON COLUMN escrows.payer_refund_account_id IS
  'Legacy (no longer written): the payable account a cancel or expiry before disbursement existed moved the funding to; an operator refunds any balance left there (docs/escrow.md).';
