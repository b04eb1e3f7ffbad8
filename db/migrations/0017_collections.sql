-- Collections (docs/contracts/collections-and-payouts.md): virtual accounts allocated at the provider, payment intents, FBO pool
-- accounts, and the inbound credits the provider announces to Rail.

-- At the sandbox bank, a virtual account is a collection account in a client's name (the
-- provider profile that allocated it): money paid into it lands in the bank's settlement pool,
-- and the bank announces each credit to its client by a signed webhook.
ALTER TABLE sandbox_bank.accounts DROP CONSTRAINT accounts_kind_check;
ALTER TABLE sandbox_bank.accounts ADD CONSTRAINT accounts_kind_check CHECK (kind IN ('customer', 'settlement', 'virtual'));
ALTER TABLE sandbox_bank.accounts ADD COLUMN client text;
ALTER TABLE sandbox_bank.accounts ADD COLUMN client_reference text;
ALTER TABLE sandbox_bank.accounts ADD COLUMN archived_at timestamptz;
ALTER TABLE sandbox_bank.accounts ADD CONSTRAINT accounts_virtual_has_client
  CHECK ((kind = 'virtual') = (client IS NOT NULL AND client_reference IS NOT NULL));
-- Allocation is idempotent on the client's reference: asked again, the bank answers the same account.
CREATE UNIQUE INDEX accounts_virtual_by_client_reference ON sandbox_bank.accounts (client, client_reference) WHERE kind = 'virtual';

ALTER TABLE sandbox_bank.transfers DROP CONSTRAINT transfers_kind_check;
ALTER TABLE sandbox_bank.transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('book', 'credit', 'debit', 'interbank', 'payout', 'inbound'));
-- An inbound credit: paid by someone at any bank into a virtual account here.
ALTER TABLE sandbox_bank.transfers ADD COLUMN payer_name text CHECK (length(payer_name) <= 100);
ALTER TABLE sandbox_bank.transfers ADD COLUMN payer_account_number text CHECK (payer_account_number ~ '^[0-9]{10}$');
ALTER TABLE sandbox_bank.transfers ADD COLUMN payer_bank_code text CHECK (payer_bank_code ~ '^[0-9]{3,6}$');
-- When the bank's webhook announcing an inbound credit was answered 2xx by its client.
ALTER TABLE sandbox_bank.transfers ADD COLUMN notified_at timestamptz;
CREATE INDEX transfers_inbound_by_account ON sandbox_bank.transfers (credit_account_number, created_at) WHERE kind = 'inbound';

-- Every NUBAN Rail allocated at a provider, whatever it collects for: a payment intent, a
-- persistent virtual account, or an FBO pool account. Inbound credits are matched to their
-- owner through this table.
CREATE TABLE virtual_accounts (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  -- The stable public id of the account (and of the payment intent it serves).
  tracking_id text NOT NULL UNIQUE CHECK (tracking_id ~ '^trk_[a-z0-9]{24}$'),
  purpose text NOT NULL CHECK (purpose IN ('payment_intent', 'persistent', 'fbo')),
  -- The partner's reference: of the persistent account, or of the payment intent.
  reference text CHECK (length(reference) BETWEEN 1 AND 64),
  -- Hash of the creating request (persistent and FBO), so a replay with another body is a conflict.
  request_hash text,
  provider text NOT NULL REFERENCES providers (name),
  provider_channel text NOT NULL,
  provider_reference text NOT NULL,
  bank_code text NOT NULL CHECK (bank_code ~ '^[0-9]{3,6}$'),
  account_number text NOT NULL CHECK (account_number ~ '^[0-9]{10}$'),
  account_name text NOT NULL CHECK (length(account_name) BETWEEN 1 AND 100),
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  purpose_tag text CHECK (length(purpose_tag) <= 64),
  callback_url text,
  -- The persistent account's holder as the partner described it (never for FBO: identity-blind).
  holder jsonb,
  -- FBO only: the partner's opaque holder reference.
  holder_ref text CHECK (length(holder_ref) BETWEEN 1 AND 128),
  -- BRR-bearing accounts (government and corporate partners, FBO excepted).
  brr text UNIQUE CHECK (brr ~ '^BRR[0-9]{17}$'),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  creator_metadata jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  archived_at timestamptz,
  CONSTRAINT virtual_accounts_one_number UNIQUE (provider, account_number),
  CONSTRAINT virtual_accounts_archived_when CHECK ((status = 'archived') = (archived_at IS NOT NULL)),
  CONSTRAINT virtual_accounts_fbo_blind CHECK (purpose <> 'fbo' OR (holder IS NULL AND holder_ref IS NOT NULL AND brr IS NULL))
);
CREATE UNIQUE INDEX virtual_accounts_persistent_reference ON virtual_accounts (partner_id, reference) WHERE purpose = 'persistent';
CREATE UNIQUE INDEX virtual_accounts_fbo_holder ON virtual_accounts (partner_id, holder_ref, coalesce(purpose_tag, '')) WHERE purpose = 'fbo';
CREATE INDEX virtual_accounts_by_partner ON virtual_accounts (partner_id, purpose, id DESC);

-- A payment intent: one collection into its own virtual account, optionally of an expected
-- amount, until it expires. An owner (an invoice, an escrow) may compose one and decide what a
-- credit to it means.
CREATE TABLE payment_intents (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  reference text NOT NULL CHECK (length(reference) BETWEEN 1 AND 64),
  request_hash text NOT NULL,
  virtual_account_id uuid NOT NULL UNIQUE REFERENCES virtual_accounts (id),
  -- pending: nothing received; partially_paid / overpaid: an expected amount was not met or was
  -- exceeded; paid: the expected amount (or, with none expected, any amount) was received;
  -- expired: the sweep closed it (its account archived).
  status text NOT NULL CHECK (status IN ('pending', 'partially_paid', 'paid', 'overpaid', 'expired')),
  amount_kobo bigint CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  amount_received_kobo bigint NOT NULL DEFAULT 0 CHECK (amount_received_kobo >= 0),
  currency text NOT NULL,
  expires_at timestamptz NOT NULL,
  checkout_token text NOT NULL UNIQUE,
  merchant_display_name text NOT NULL CHECK (length(merchant_display_name) BETWEEN 1 AND 100),
  return_url text,
  callback_url text,
  purpose_tag text CHECK (length(purpose_tag) <= 64),
  holder jsonb,
  owner_type text CHECK (owner_type IN ('invoice', 'escrow')),
  owner_id uuid,
  creator_metadata jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  status_changed_at timestamptz NOT NULL DEFAULT now(),
  paid_at timestamptz,
  CONSTRAINT payment_intents_one_per_reference UNIQUE (partner_id, reference),
  CONSTRAINT payment_intents_owner_whole CHECK ((owner_type IS NULL) = (owner_id IS NULL))
);
CREATE INDEX payment_intents_by_partner ON payment_intents (partner_id, id DESC);
-- The expiry sweep's work list.
CREATE INDEX payment_intents_open_by_expiry ON payment_intents (expires_at) WHERE status IN ('pending', 'partially_paid');

-- Every credit a provider announced (or a requery found), stored before anything else is done
-- with it, once per provider session id. A job then matches it to its account and applies it.
CREATE TABLE inbound_credits (
  id uuid PRIMARY KEY,
  provider text NOT NULL REFERENCES providers (name),
  session_id text NOT NULL CHECK (length(session_id) BETWEEN 1 AND 64),
  account_number text NOT NULL CHECK (account_number ~ '^[0-9]{10}$'),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  payer_name text,
  payer_account_number text,
  payer_bank_code text,
  narration text,
  -- The reference Rail gave the provider when it allocated the account ("<partnerId>.<hash>"):
  -- it names the partner of an account Rail has no record of (an allocation whose request failed).
  account_reference text CHECK (length(account_reference) <= 64),
  -- When the bank says the money arrived.
  credited_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  -- received: stored, not yet applied; applied: matched and credited to its owner; unmatched: in
  -- the partner's suspense account awaiting triage; refund_pending: its refund payout is on its
  -- way (a failed payout puts it back to unmatched); refunded / assigned: triage settled it;
  -- unattributed: the account is no account of Rail's (no partner to hold it for).
  status text NOT NULL DEFAULT 'received' CHECK (status IN ('received', 'applied', 'unmatched', 'refund_pending', 'refunded', 'assigned', 'unattributed')),
  partner_id uuid REFERENCES partners (id),
  virtual_account_id uuid REFERENCES virtual_accounts (id),
  -- The transaction BRR, for a credit to a BRR-bearing account.
  brr text UNIQUE CHECK (brr ~ '^BRR[0-9]{17}$'),
  unmatched_reason text,
  -- How triage settled it: {"action":"refund","outboundTransferId":…} or {"action":"assign","trackingId":…}.
  resolution jsonb,
  applied_at timestamptz,
  resolved_at timestamptz,
  -- Times the credit failed when applied on its own; batches leave such a credit to its own job.
  apply_failures integer NOT NULL DEFAULT 0,
  CONSTRAINT inbound_credits_once_per_session UNIQUE (provider, session_id)
);
CREATE INDEX inbound_credits_by_account ON inbound_credits (virtual_account_id, id DESC);
CREATE INDEX inbound_credits_unmatched ON inbound_credits (partner_id, id DESC) WHERE status = 'unmatched';
-- The sweep's work list: credits stored but not yet applied (a worker died, or its job was lost).
CREATE INDEX inbound_credits_received ON inbound_credits (received_at) WHERE status = 'received';
