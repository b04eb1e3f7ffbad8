-- Real providers (issue 32): Paystack and Monnify profiles beside the sandbox's, with their address,
-- their settings and their secrets (sealed with the master key); which provider each partner's
-- payouts, collections and wallets go through; and the transfer recipients Paystack pays.

-- The adapters Rail has. A profile's base URL is null when the provider is served by this Rail's own
-- sandbox (the sandbox bank, or its /sandbox-paystack and /sandbox-monnify dialects): its address is
-- the server's own, known once it listens. `settings` holds what is not secret (Monnify's contract
-- code and source account, a preferred bank); `sealed_secrets` the keys, AES-256-GCM with the master
-- key, bound to the profile's name. `webhook_source_addresses`, when set, is the allowlist of
-- addresses the provider's webhooks may come from.
ALTER TABLE providers DROP CONSTRAINT providers_adapter_check;
ALTER TABLE providers ADD CONSTRAINT providers_adapter_check CHECK (adapter IN ('sandbox', 'paystack', 'monnify'));
ALTER TABLE providers
  ADD COLUMN base_url text CHECK (base_url ~ '^https?://[^\s]+$' AND length(base_url) <= 300),
  ADD COLUMN settings jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(settings) = 'object'),
  ADD COLUMN sealed_secrets bytea,
  ADD COLUMN webhook_source_addresses text[];

-- The sandbox's own dialects of the two real providers: a sandbox partner routed through them runs
-- Rail's real adapters end to end. Paystack has no wallets (merchant credit, debit, wallet
-- transfer are false); Monnify's wallets are paid into by transfer and pay out by disbursement, and
-- it has no merchant credit, debit or transfer between wallets.
INSERT INTO providers (name, adapter, merchant_credit, debit, wallet_transfer, bank_payout, name_check, narration, virtual_accounts) VALUES
  ('sandbox-paystack', 'paystack', false, false, false, true, true, true, true),
  ('sandbox-monnify', 'monnify', false, false, false, true, true, true, true);

-- Which providers a partner's money goes through, by purpose; a partner with no route for a
-- purpose uses the sandbox. Payouts may list several providers in order: a new instruction goes to
-- the first healthy one (an instruction stays with the provider it was given to).
CREATE TABLE partner_provider_routes (
  partner_id uuid NOT NULL REFERENCES partners (id),
  purpose text NOT NULL CHECK (purpose IN ('payouts', 'collections', 'wallets')),
  position smallint NOT NULL CHECK (position BETWEEN 1 AND 8),
  provider text NOT NULL REFERENCES providers (name),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (partner_id, purpose, position),
  UNIQUE (partner_id, purpose, provider),
  CHECK (purpose = 'payouts' OR position = 1)
);

-- Paystack pays a transfer recipient, made once per beneficiary account and kept.
CREATE TABLE provider_recipients (
  provider text NOT NULL REFERENCES providers (name),
  bank_code text NOT NULL CHECK (bank_code ~ '^[0-9]{3,6}$'),
  account_number text NOT NULL CHECK (account_number ~ '^[0-9]{10}$'),
  recipient_code text NOT NULL CHECK (length(recipient_code) BETWEEN 1 AND 64),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, bank_code, account_number)
);
