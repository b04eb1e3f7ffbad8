-- One row per Refunds API request (POST /api/v1/rail/refunds). A request makes one refund per
-- credit, all under the partner's one reference, so no refund row can claim the reference by
-- itself: this row does, as every create claims its reference — the first write of the request's
-- transaction, INSERT … ON CONFLICT DO NOTHING — and a duplicate waits only for that transaction.
CREATE TABLE refund_requests (
  partner_id uuid NOT NULL REFERENCES partners (id),
  reference text NOT NULL CHECK (length(reference) BETWEEN 1 AND 200),
  request_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (partner_id, reference)
);

-- Requests made before this table claimed their reference by their refunds: one row each.
-- backfill refund requests: begin
INSERT INTO refund_requests (partner_id, reference, request_hash, created_at)
SELECT DISTINCT ON (partner_id, reference) partner_id, reference, request_hash, created_at
  FROM refunds
 WHERE origin_type = 'partner'
 ORDER BY partner_id, reference, id
ON CONFLICT (partner_id, reference) DO NOTHING;
-- backfill refund requests: end
