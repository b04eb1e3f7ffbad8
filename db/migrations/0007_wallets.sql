-- Customer wallets (docs/contracts/wallets.md). A wallet is an account at a provider (its NUBAN) mirrored by a
-- ledger account that may not be overdrawn; every balance Rail reports comes from the ledger.
CREATE TABLE wallets (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  -- The partner's own id for the customer; a wallet is created once per reference.
  customer_reference text NOT NULL CHECK (length(customer_reference) BETWEEN 1 AND 64),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  provider text NOT NULL REFERENCES providers (name),
  currency text NOT NULL CHECK (currency = 'NGN'),
  ledger_account_id uuid NOT NULL UNIQUE REFERENCES ledger_accounts (id),
  bank_code text NOT NULL CHECK (bank_code ~ '^[0-9]{3}$'),
  account_number text NOT NULL CHECK (account_number ~ '^[0-9]{10}$'),
  -- Hash of the creating request, so that a replay with another body is told apart (409).
  request_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT wallets_one_per_customer_reference UNIQUE (partner_id, customer_reference)
);

CREATE INDEX wallets_by_partner ON wallets (partner_id, id);
