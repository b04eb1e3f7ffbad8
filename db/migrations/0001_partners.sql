-- Partners are the callers of Rail's APIs. Every business object records its owning partner and
-- every query filters by it.
CREATE TABLE partners (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- Governs BRR-bearing virtual accounts: government and corporate partners get BRRs.
  customer_class text NOT NULL CHECK (customer_class IN ('government', 'corporate', 'fintech', 'citizen')),
  -- Sandbox partners reach the sandbox bank and sandbox-only routes; live ones never do.
  environment text NOT NULL CHECK (environment IN ('sandbox', 'live')),
  -- Default address for signed callbacks; a request may override it.
  callback_url text CHECK (length(callback_url) <= 2048),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Credentials of a partner. A rotation adds a new row and gives the old one an expiry (the
-- overlap), so both work until then. Secrets never appear in clear: signing and callback
-- secrets are sealed with AES-256-GCM under the master key (bound to the row id); escrow API
-- keys are kept only as SHA-256 hashes.
CREATE TABLE partner_credentials (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  -- request_signing: X-Rail-Key-Id + HMAC; escrow_api_key: X-API-Key; callback_signing: signs callbacks.
  kind text NOT NULL CHECK (kind IN ('request_signing', 'escrow_api_key', 'callback_signing')),
  key_id text UNIQUE,
  secret_sealed bytea,
  api_key_hash bytea UNIQUE,
  api_key_prefix text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Set when the credential is rotated out: it stays valid until this instant.
  expires_at timestamptz,
  revoked_at timestamptz,
  CONSTRAINT partner_credentials_shape CHECK (
    (kind = 'request_signing' AND key_id IS NOT NULL AND secret_sealed IS NOT NULL AND api_key_hash IS NULL)
    OR (kind = 'callback_signing' AND key_id IS NULL AND secret_sealed IS NOT NULL AND api_key_hash IS NULL)
    OR (kind = 'escrow_api_key' AND key_id IS NULL AND secret_sealed IS NULL AND api_key_hash IS NOT NULL AND api_key_prefix IS NOT NULL)
  )
);

CREATE INDEX partner_credentials_by_partner ON partner_credentials (partner_id, kind, created_at);
