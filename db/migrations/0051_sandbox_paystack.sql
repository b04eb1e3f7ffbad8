-- The sandbox's Paystack dialect (/sandbox-paystack, src/sandbox-bank/paystack/): what Paystack
-- keeps beside the bank's books — transfer recipients, the transfers made through it (each one a
-- payout on the bank's books under the same reference), customers and their dedicated accounts
-- (virtual accounts of the bank, client sandbox-paystack). Numeric ids and codes are Paystack's
-- kind; the money itself is only ever on the bank's books.

-- A payout the simulator reversed after it settled (the money came back to the float): the bank
-- still answers 00 for it on a requery (NIP has no code for it); the dialect says `reversed`.
ALTER TABLE sandbox_bank.transfers
  ADD COLUMN reversed_at timestamptz,
  ADD CONSTRAINT transfers_only_settled_payouts_reverse CHECK (reversed_at IS NULL OR (kind = 'payout' AND response_code = '00'));

-- One recipient per bank account, as Paystack keeps them: creating one again answers the first.
CREATE TABLE sandbox_bank.paystack_recipients (
  id bigint GENERATED ALWAYS AS IDENTITY (START WITH 10000) PRIMARY KEY,
  recipient_code text NOT NULL CONSTRAINT paystack_recipients_code_key UNIQUE CHECK (recipient_code ~ '^RCP_[a-z0-9]{15}$'),
  type text NOT NULL CHECK (type = 'nuban'),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  bank_code text NOT NULL CHECK (bank_code ~ '^[0-9]{3}$'),
  account_number text NOT NULL CHECK (account_number ~ '^[0-9]{10}$'),
  -- The holder's name as the name enquiry gave it when the recipient was created.
  account_name text NOT NULL CHECK (length(account_name) BETWEEN 1 AND 100),
  currency text NOT NULL CHECK (currency = 'NGN'),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 200),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT paystack_recipients_one_per_account UNIQUE (bank_code, account_number)
);

-- A transfer made through the dialect: the bank's payout of the same reference holds its amount,
-- destination and outcome; this row holds what Paystack adds (its code, recipient, reason).
CREATE TABLE sandbox_bank.paystack_transfers (
  id bigint GENERATED ALWAYS AS IDENTITY (START WITH 500000) PRIMARY KEY,
  transfer_code text NOT NULL CONSTRAINT paystack_transfers_code_key UNIQUE CHECK (transfer_code ~ '^TRF_[a-z0-9]{15}$'),
  reference text NOT NULL CONSTRAINT paystack_transfers_reference_key UNIQUE REFERENCES sandbox_bank.transfers (reference),
  recipient_id bigint NOT NULL REFERENCES sandbox_bank.paystack_recipients (id),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0),
  currency text NOT NULL CHECK (currency = 'NGN'),
  reason text NOT NULL DEFAULT '' CHECK (length(reason) <= 100),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One customer per email, as Paystack keeps them: creating one again answers the first.
CREATE TABLE sandbox_bank.paystack_customers (
  id bigint GENERATED ALWAYS AS IDENTITY (START WITH 70000) PRIMARY KEY,
  customer_code text NOT NULL CONSTRAINT paystack_customers_code_key UNIQUE CHECK (customer_code ~ '^CUS_[a-z0-9]{15}$'),
  email text NOT NULL CONSTRAINT paystack_customers_email_key UNIQUE CHECK (length(email) BETWEEN 3 AND 254),
  first_name text CHECK (length(first_name) <= 50),
  last_name text CHECK (length(last_name) <= 50),
  phone text CHECK (length(phone) <= 20),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- A customer's dedicated account: a virtual account of the bank (client sandbox-paystack). A
-- customer has at most one active; a deactivated one stays (its account is archived at the bank).
CREATE TABLE sandbox_bank.paystack_dedicated_accounts (
  id bigint GENERATED ALWAYS AS IDENTITY (START WITH 30000) PRIMARY KEY,
  customer_id bigint NOT NULL REFERENCES sandbox_bank.paystack_customers (id),
  account_number text NOT NULL CONSTRAINT paystack_dedicated_accounts_account_key UNIQUE REFERENCES sandbox_bank.accounts (account_number),
  preferred_bank text NOT NULL CHECK (length(preferred_bank) BETWEEN 1 AND 50),
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX paystack_dedicated_accounts_one_active ON sandbox_bank.paystack_dedicated_accounts (customer_id) WHERE active;
