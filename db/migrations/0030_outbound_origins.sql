-- Every payment out of Rail is an outbound transfer of the payment pipeline, listed in
-- GET /api/v1/rail/outbound with its origin: the partner's own payout, a refund (of a credit),
-- an escrow's disbursement, or a settlement of collections to the partner's bank. The origin's
-- reference is the handle the partner knows it by (the escrow's ref, the refund's reference, the
-- settlement's id), so a payout in the list names its origin without another look-up.
ALTER TABLE outbound_transfers DROP CONSTRAINT outbound_transfers_origin_type_check;
ALTER TABLE outbound_transfers
  ADD CONSTRAINT outbound_transfers_origin_type_check CHECK (origin_type IN ('partner', 'refund', 'escrow', 'settlement'));
ALTER TABLE outbound_transfers ADD COLUMN origin_reference text;
