-- Wallet funding by transfer (issue 18): some providers fund a wallet only when the customer
-- transfers in to its account number (docs/contracts/wallets.md). Such a credit takes the inbound-credit path of
-- virtual accounts — stored once per provider session id, applied once by its job — and is
-- applied to the wallet whose account number it was paid into.

-- The wallet a credit was applied to (a credit is applied to a virtual account or a wallet, never both).
ALTER TABLE inbound_credits ADD COLUMN wallet_id uuid REFERENCES wallets (id);
ALTER TABLE inbound_credits ADD CONSTRAINT inbound_credits_one_target CHECK (virtual_account_id IS NULL OR wallet_id IS NULL);
CREATE INDEX inbound_credits_by_wallet ON inbound_credits (wallet_id, id DESC) WHERE wallet_id IS NOT NULL;

-- Credits are matched to wallets by the provider and the account number the bank reports. Not
-- unique: a second unique constraint on wallets would turn a concurrent duplicate creation (which
-- ON CONFLICT of wallets_one_per_customer_reference answers) into an error.
CREATE INDEX wallets_by_account_number ON wallets (provider, account_number);

-- At the sandbox bank, a wallet's account is a customer account with a client: the provider
-- profile that opened it, which the bank tells of credits paid into it (as of virtual accounts).
-- Customer accounts opened without a client (tests opening payers' accounts) are told of nothing.
ALTER TABLE sandbox_bank.accounts DROP CONSTRAINT accounts_virtual_has_client;
ALTER TABLE sandbox_bank.accounts ADD CONSTRAINT accounts_virtual_has_client
  CHECK (kind <> 'virtual' OR (client IS NOT NULL AND client_reference IS NOT NULL));
ALTER TABLE sandbox_bank.accounts ADD CONSTRAINT accounts_settlement_has_no_client CHECK (kind <> 'settlement' OR client IS NULL);
-- Wallets opened before: their accounts' client is the wallet's provider.
UPDATE sandbox_bank.accounts a SET client = w.provider
  FROM wallets w
 WHERE a.account_number = w.account_number AND a.kind = 'customer' AND a.client IS NULL;
