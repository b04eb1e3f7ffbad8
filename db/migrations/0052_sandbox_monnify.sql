-- The sandbox's Monnify dialect (/sandbox-monnify, src/sandbox-bank/monnify/): what Monnify keeps
-- beside the bank's books. Money and transfers stay in sandbox_bank.accounts and
-- sandbox_bank.transfers; these tables hold only what the dialect answers that the bank does not
-- know: its bearer tokens, a disbursement's request, wallets' and reserved accounts' details.

-- The bearer tokens POST /api/v1/auth/login issued, by the SHA-256 of the token (never the token).
CREATE TABLE sandbox_bank.monnify_access_tokens (
  token_sha256 text PRIMARY KEY,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX monnify_access_tokens_expiry ON sandbox_bank.monnify_access_tokens (expires_at);

-- A single disbursement as it was asked (its transfer on the books has the same reference).
-- `source_kind` says which account paid: the merchant's main account (a payout from the settlement
-- pool, settled by the simulator's outcome) or one of the merchant's wallets (an interbank
-- transfer that settles by itself). `announced_status` is the final status whose webhook was
-- queued: set once, so that a disbursement is announced once however many times it is looked at.
CREATE TABLE sandbox_bank.monnify_disbursements (
  reference text PRIMARY KEY,
  source_account_number text NOT NULL,
  source_kind text NOT NULL CHECK (source_kind IN ('main', 'wallet')),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0),
  narration text NOT NULL,
  destination_bank_code text NOT NULL,
  destination_account_number text NOT NULL,
  destination_account_name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  announced_status text CHECK (announced_status IN ('SUCCESS', 'FAILED'))
);

-- The merchant's customer wallets: each is a customer account of the bank opened with its wallet
-- reference as opening reference and the dialect as client.
CREATE TABLE sandbox_bank.monnify_wallets (
  wallet_reference text PRIMARY KEY,
  account_number text NOT NULL UNIQUE,
  wallet_name text NOT NULL,
  customer_name text NOT NULL,
  customer_email text NOT NULL,
  bvn text,
  bvn_date_of_birth text,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Reserved accounts: each is a virtual account of the bank allocated with its account reference.
-- A deallocated account keeps its row (its transactions stay listable), with when.
CREATE TABLE sandbox_bank.monnify_reserved_accounts (
  account_reference text PRIMARY KEY,
  account_number text NOT NULL UNIQUE,
  account_name text NOT NULL,
  currency_code text NOT NULL,
  contract_code text NOT NULL,
  customer_email text NOT NULL,
  customer_name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  deallocated_at timestamptz
);
