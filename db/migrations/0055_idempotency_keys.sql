-- One idempotency mechanism besides the caller's reference (docs/decisions/0018-idempotency-key.md):
-- the Idempotency-Key header. A state-changing request that is not a create on a reference may
-- carry a client-chosen key; the first request's answer is kept under (partner, key) with a hash of
-- its method, path and body, for 24 hours, and answers the same request sent again with the key.
CREATE TABLE idempotency_keys (
  partner_id uuid NOT NULL REFERENCES partners (id),
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  -- SHA-256 of the method, path and body: the same key with another request is 409.
  request_hash text NOT NULL CHECK (length(request_hash) = 64),
  -- The first request's answer; NULL while it is still being worked (or, claimed in the
  -- transaction of its effect, until its answer is stored just after).
  response_status integer CHECK (response_status BETWEEN 100 AND 599),
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (partner_id, key)
);

-- Each claim deletes its partner's expired keys, oldest first.
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (partner_id, created_at);

-- What the key replaces: remembered signatures (a request without a reference kept its
-- signature) and ordering by signed time (a change that sets values kept the signed second and
-- body hashes of the last changes applied, and refused an older one as stale_request).
DROP TABLE signed_requests;

ALTER TABLE partners
  DROP COLUMN settings_signed_at_s,
  DROP COLUMN settings_signed_hashes;

ALTER TABLE counterparties
  DROP COLUMN signed_at_s,
  DROP COLUMN signed_hashes;

ALTER TABLE settlement_settings
  DROP COLUMN changes_signed_at_s,
  DROP COLUMN changes_body_hashes;
