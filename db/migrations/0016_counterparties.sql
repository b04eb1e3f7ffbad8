-- Counterparties (docs/contracts/collections-and-payouts.md): a partner's saved beneficiaries, made on the first payout to an
-- account (or explicitly), renamed or archived by the partner (soft state only).
CREATE TABLE counterparties (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  bank_code text NOT NULL CHECK (bank_code ~ '^[0-9]{3,6}$'),
  account_number text NOT NULL CHECK (account_number ~ '^[0-9]{10}$'),
  -- The name the partner gave for the account, and the bank's own (name enquiry), once known.
  account_name text NOT NULL CHECK (length(account_name) BETWEEN 1 AND 100),
  verified_account_name text CHECK (length(verified_account_name) <= 100),
  -- The partner's label for it.
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  archived boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  CONSTRAINT counterparties_one_per_account UNIQUE (partner_id, bank_code, account_number)
);

CREATE INDEX counterparties_by_partner ON counterparties (partner_id, id DESC);
