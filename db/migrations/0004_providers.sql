-- Banking providers and what each is approved to do (docs/design.md §6). An operation whose capability
-- is false fails closed: no provider call, no ledger transfer, no move recorded.
CREATE TABLE providers (
  name text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9-]{1,31}$'),
  -- The code that talks to it; several providers may share an adapter with different approvals.
  adapter text NOT NULL CHECK (adapter IN ('sandbox')),
  -- Merchant-initiated funding of a wallet (some providers fund only by inbound transfer).
  merchant_credit boolean NOT NULL,
  -- Debiting a customer's wallet: approval-gated by the provider.
  debit boolean NOT NULL,
  wallet_transfer boolean NOT NULL,
  bank_payout boolean NOT NULL,
  -- The provider checks destinationAccountName against a name enquiry before paying out.
  name_check boolean NOT NULL,
  -- The provider carries a statement narration.
  narration boolean NOT NULL,
  virtual_accounts boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Two sandbox profiles ship: one fully approved, one not yet approved for merchant credit and
-- debit, so that the fail-closed paths are exercised for real.
INSERT INTO providers (name, adapter, merchant_credit, debit, wallet_transfer, bank_payout, name_check, narration, virtual_accounts) VALUES
  ('sandbox', 'sandbox', true, true, true, true, true, true, true),
  ('sandbox-restricted', 'sandbox', false, false, true, true, true, true, true);
