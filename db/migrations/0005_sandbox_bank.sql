-- The sandbox bank keeps its own books, in its own schema: Rail reaches it only over HTTP, as it
-- would a real bank. Nothing outside src/sandbox-bank/ reads or writes these tables.
CREATE SCHEMA sandbox_bank;

-- Accounts held at the sandbox bank: customers' accounts (wallets) and the merchant's settlement
-- account, the pool that merchant-initiated credits come from and debits go to.
CREATE TABLE sandbox_bank.accounts (
  account_number text PRIMARY KEY CHECK (account_number ~ '^[0-9]{10}$'),
  bank_code text NOT NULL CHECK (bank_code ~ '^[0-9]{3}$'),
  account_name text NOT NULL CHECK (length(account_name) BETWEEN 1 AND 100),
  kind text NOT NULL CHECK (kind IN ('customer', 'settlement')),
  balance_kobo bigint NOT NULL DEFAULT 0,
  -- dormant accounts refuse transfers with NIP 06.
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'dormant')),
  created_at timestamptz NOT NULL DEFAULT now(),
  -- A customer cannot be overdrawn; the settlement pool is backed outside the sandbox.
  CONSTRAINT accounts_customer_not_overdrawn CHECK (kind = 'settlement' OR balance_kobo >= 0)
);

-- NUBAN serials of accounts opened here.
CREATE SEQUENCE sandbox_bank.account_serial START 1000;
-- The 12-digit sequence of NIP session ids.
CREATE SEQUENCE sandbox_bank.session_sequence;

-- Every transfer asked of the bank, answered or refused, under the caller's reference: a
-- reference is used once (a second request with it is NIP 26, duplicate), and a requery by
-- reference answers what happened to the first.
CREATE TABLE sandbox_bank.transfers (
  session_id text PRIMARY KEY CHECK (session_id ~ '^[0-9]{30}$'),
  reference text NOT NULL UNIQUE CHECK (length(reference) BETWEEN 1 AND 64),
  -- book: between two customers; credit: settlement → customer; debit: customer → settlement.
  kind text NOT NULL CHECK (kind IN ('book', 'credit', 'debit')),
  debit_account_number text NOT NULL,
  credit_account_number text NOT NULL,
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0),
  narration text CHECK (length(narration) <= 100),
  response_code text NOT NULL CHECK (response_code ~ '^[0-9]{2}$'),
  created_at timestamptz NOT NULL DEFAULT now()
);
