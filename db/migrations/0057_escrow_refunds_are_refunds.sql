-- An escrow's refunds are the refunds module's rows (origin_type 'escrow', origin_id the escrow):
-- escrow_refunds only copied them. Each of its rows was written in the transaction that made its
-- refund, with the refund's id, credit, amount and payout, and its state was ended in the
-- transaction that ended the refund's. The one thing it held that refunds has no column for is its
-- purpose, and that follows from the escrow: a released escrow refunds only its excess
-- ('excess_refund'), a cancelled or expired one only its funding ('refund'). So nothing is moved:
-- the table is dropped once every row is checked to be a copy of its refund and its purpose to be
-- the one its escrow implies; a row that is not stops the migration, and nothing is dropped.
-- check the copies: begin
DO $$
DECLARE
  stray record;
BEGIN
  SELECT er.refund_id, er.escrow_id INTO stray
    FROM escrow_refunds er
    JOIN escrows e ON e.id = er.escrow_id
    LEFT JOIN refunds r ON r.id = er.refund_id
   WHERE r.id IS NULL
      OR r.origin_type <> 'escrow' OR r.origin_id <> er.escrow_id
      OR r.credit_id <> er.credit_id OR r.amount_kobo <> er.amount_kobo
      OR r.outbound_transfer_id IS DISTINCT FROM er.outbound_transfer_id
      OR er.purpose <> CASE WHEN e.status = 'released' THEN 'excess_refund' ELSE 'refund' END
   LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'escrow refund % of escrow % is not a copy of its refund: compare escrow_refunds with refunds before dropping it',
      stray.refund_id, stray.escrow_id;
  END IF;
END
$$;
-- check the copies: end

DROP TABLE escrow_refunds;
DELETE FROM state_transitions WHERE machine = 'escrow_credit_refund';

-- What an escrow reads of its refunds, oldest first.
CREATE INDEX refunds_by_origin ON refunds (origin_id, created_at, id) WHERE origin_id IS NOT NULL;

-- The payable accounts a release, cancel or expiry moved money to before disbursement and refunds
-- existed. No code reads these columns; the link from such an account to its escrow is kept by the
-- ledger itself, in the transfers that filled it (source_type 'escrow', source_id the escrow's id;
-- docs/escrow.md "Money released or refunded before disbursement existed").
ALTER TABLE escrows
  DROP COLUMN recipient_payable_account_id,
  DROP COLUMN payer_refund_account_id;
