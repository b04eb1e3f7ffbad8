-- The ledger: double-entry accounts and append-only transfers, modelled on TigerBeetle.
-- Only src/ledger/ writes these tables, and only through ledger_create_transfers().

-- An account holds four running totals. booked = credits_posted − debits_posted;
-- available = booked − debits_pending. Totals never go negative, and the flags bound them.
CREATE TABLE ledger_accounts (
  id uuid PRIMARY KEY,
  partner_id uuid REFERENCES partners (id),
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  -- wallet: a customer's wallet; float: the partner's payout balance; collections: money
  -- collected for the partner; escrow_holding: funds held in escrow; provider_settlement: the
  -- provider's side of money entering or leaving the rail; suspense: unmatched credits awaiting
  -- triage; payable: money owed onward (escrow recipient, refunds); fees: fee income;
  -- bench: accounts made by benchmarks and tests only.
  kind text NOT NULL CHECK (kind IN ('wallet', 'float', 'collections', 'escrow_holding', 'provider_settlement', 'suspense', 'payable', 'fees', 'bench')),
  debits_pending bigint NOT NULL DEFAULT 0 CHECK (debits_pending >= 0),
  debits_posted bigint NOT NULL DEFAULT 0 CHECK (debits_posted >= 0),
  credits_pending bigint NOT NULL DEFAULT 0 CHECK (credits_pending >= 0),
  credits_posted bigint NOT NULL DEFAULT 0 CHECK (credits_posted >= 0),
  -- A customer wallet may not be overdrawn: its debits (pending and posted) stay within its credits.
  debits_must_not_exceed_credits boolean NOT NULL DEFAULT false,
  -- The mirror image, for accounts that must not hold more than was put in (e.g. a payable).
  credits_must_not_exceed_debits boolean NOT NULL DEFAULT false,
  -- open: any transfer; frozen: no new transfers, pending ones may still post or void;
  -- closed: as frozen, for good.
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'frozen', 'closed')),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT ledger_accounts_one_flag CHECK (NOT (debits_must_not_exceed_credits AND credits_must_not_exceed_debits)),
  CONSTRAINT ledger_accounts_debits_within_credits CHECK (NOT debits_must_not_exceed_credits OR debits_pending + debits_posted <= credits_posted),
  CONSTRAINT ledger_accounts_credits_within_debits CHECK (NOT credits_must_not_exceed_debits OR credits_pending + credits_posted <= debits_posted)
);

-- One float, collections, escrow holding, provider settlement, suspense and fees account per
-- partner and currency.
CREATE UNIQUE INDEX ledger_accounts_one_per_partner ON ledger_accounts (partner_id, currency, kind)
  WHERE kind IN ('float', 'collections', 'escrow_holding', 'provider_settlement', 'suspense', 'fees');

-- Transfers are facts: never updated, never deleted. The id is chosen by the caller, so that a
-- retry finds the transfer it already made. `sequence` orders all transfers as they were
-- applied (an identity: unique by construction, so no index of its own beyond the statement's); each side records its account's balances right after this transfer, so that a
-- statement with running balances is one index range scan.
CREATE TABLE ledger_transfers (
  id uuid PRIMARY KEY,
  sequence bigint GENERATED ALWAYS AS IDENTITY,
  debit_account_id uuid NOT NULL REFERENCES ledger_accounts (id),
  credit_account_id uuid NOT NULL REFERENCES ledger_accounts (id),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  currency text NOT NULL,
  -- single: posted at once; pending: reserves (two-phase); post / void: resolves a pending one.
  phase text NOT NULL CHECK (phase IN ('single', 'pending', 'post', 'void')),
  pending_id uuid REFERENCES ledger_transfers (id),
  -- Why the money moved, e.g. wallet_credit; stable and machine-readable.
  code text NOT NULL CHECK (code ~ '^[a-z][a-z0-9_]{0,63}$'),
  -- The business object that caused it, e.g. ('wallet_move', '<uuid>').
  source_type text CHECK (length(source_type) <= 64),
  source_id text CHECK (length(source_id) <= 128),
  debit_booked_after bigint NOT NULL,
  debit_available_after bigint NOT NULL,
  credit_booked_after bigint NOT NULL,
  credit_available_after bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT ledger_transfers_different_accounts CHECK (debit_account_id <> credit_account_id),
  CONSTRAINT ledger_transfers_resolution_names_pending CHECK ((phase IN ('post', 'void')) = (pending_id IS NOT NULL))
);

-- A pending transfer is resolved at most once: one post or one void, enforced here too.
CREATE UNIQUE INDEX ledger_transfers_one_resolution ON ledger_transfers (pending_id) WHERE pending_id IS NOT NULL;
CREATE INDEX ledger_transfers_by_debit_account ON ledger_transfers (debit_account_id, sequence);
CREATE INDEX ledger_transfers_by_credit_account ON ledger_transfers (credit_account_id, sequence);
CREATE INDEX ledger_transfers_by_source ON ledger_transfers (source_type, source_id) WHERE source_id IS NOT NULL;

CREATE FUNCTION ledger_transfers_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger_transfers is append-only (% refused)', TG_OP USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER ledger_transfers_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_transfers
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_transfers_are_append_only();

-- The state of each pending transfer (the transfers themselves never change).
CREATE TABLE ledger_pending_transfers (
  transfer_id uuid PRIMARY KEY REFERENCES ledger_transfers (id),
  -- pending: reserved; posted / voided: resolved by the transfer in resolved_by;
  -- expired: its timeout passed and the sweep voided it.
  status text NOT NULL CHECK (status IN ('pending', 'posted', 'voided', 'expired')),
  timeout_at timestamptz,
  resolved_by uuid REFERENCES ledger_transfers (id),
  resolved_at timestamptz,
  CONSTRAINT ledger_pending_transfers_resolution CHECK ((status = 'pending') = (resolved_by IS NULL))
);

CREATE INDEX ledger_pending_transfers_timeouts ON ledger_pending_transfers (timeout_at) WHERE status = 'pending' AND timeout_at IS NOT NULL;
