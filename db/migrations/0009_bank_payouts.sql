-- External sends (`POST /transfer/bank/customer`, docs/contracts/wallets.md): a wallet pays an account at any bank.

-- At the sandbox bank, an interbank transfer leaves the customer's account at once (to the
-- bank's outward settlement pool), answers 09 (in progress), and settles a moment later with the
-- outcome its destination calls for; a failure is reversed to the customer.
ALTER TABLE sandbox_bank.transfers DROP CONSTRAINT transfers_kind_check;
ALTER TABLE sandbox_bank.transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('book', 'credit', 'debit', 'interbank'));
ALTER TABLE sandbox_bank.transfers
  ADD COLUMN destination_bank_code text CHECK (destination_bank_code ~ '^[0-9]{3}$'),
  ADD COLUMN destination_account_number text CHECK (destination_account_number ~ '^[0-9]{10}$'),
  -- When an interbank transfer in progress (09) reaches its final code, and which code that is.
  ADD COLUMN settles_at timestamptz,
  ADD COLUMN final_code text CHECK (final_code ~ '^[0-9]{2}$'),
  ADD CONSTRAINT transfers_interbank_destination CHECK ((kind = 'interbank') = (destination_account_number IS NOT NULL AND destination_bank_code IS NOT NULL));

ALTER TABLE wallet_moves DROP CONSTRAINT wallet_moves_type_check;
ALTER TABLE wallet_moves ADD CONSTRAINT wallet_moves_type_check CHECK (type IN ('credit', 'debit', 'wallet_transfer', 'bank_payout'));
ALTER TABLE wallet_moves
  ADD COLUMN destination_bank_code text CHECK (destination_bank_code ~ '^[0-9]{3}$'),
  ADD COLUMN destination_account_number text CHECK (destination_account_number ~ '^[0-9]{10}$'),
  ADD COLUMN destination_account_name text CHECK (length(destination_account_name) <= 100),
  ADD CONSTRAINT wallet_moves_payout_destination CHECK ((type = 'bank_payout') = (destination_account_number IS NOT NULL AND destination_bank_code IS NOT NULL));
