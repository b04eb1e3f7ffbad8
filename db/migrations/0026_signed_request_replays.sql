-- A signed request is accepted for ±300 s (docs/authentication.md), so anyone who saw one could
-- send it again within that window. Two guards make such a replay harmless (docs/api.md,
-- "Replays and idempotency"):
--
-- 1. A change that sets values (PATCH /api/v1/rail/settings, PATCH …/counterparties/{id}) keeps
--    the signed timestamp (X-Rail-Timestamp, whole seconds) of the last change applied, and the
--    body hashes of the changes applied within that second: a change signed earlier, or an
--    earlier change of the same second sent again, is 409 stale_request instead of undoing a
--    newer one. NULL: no signed change yet.
ALTER TABLE partners
  ADD COLUMN settings_signed_at_s bigint,
  ADD COLUMN settings_signed_hashes text[] NOT NULL DEFAULT '{}';

ALTER TABLE counterparties
  ADD COLUMN signed_at_s bigint,
  ADD COLUMN signed_hashes text[] NOT NULL DEFAULT '{}';

-- 2. A route with no reference of its own to be idempotent on (redeliver, simulate an inbound
--    credit) remembers each request's signature: the same signature again — a replay, or an
--    identical retry within the same second — repeats nothing and answers what the first one did.
--    A row is useless once its signature is outside the window; each new row deletes its
--    partner's old ones.
CREATE TABLE signed_requests (
  partner_id uuid NOT NULL REFERENCES partners (id),
  signature text NOT NULL CHECK (length(signature) <= 128),
  -- The first request's answer once it has one; NULL while it is still being worked.
  response jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (partner_id, signature)
);
