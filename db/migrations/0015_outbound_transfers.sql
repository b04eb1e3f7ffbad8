-- Outbound transfers (docs/contracts/collections-and-payouts.md): payouts from the partner's float to an account at any bank.

-- At the sandbox bank, a payout leaves from the bank's settlement pool (Rail's funds at the
-- bank) to an account at another bank. It answers 09 and stays in progress until the sandbox
-- simulator registers its outcome (final_code), which the next requery settles.
ALTER TABLE sandbox_bank.transfers DROP CONSTRAINT transfers_kind_check;
ALTER TABLE sandbox_bank.transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('book', 'credit', 'debit', 'interbank', 'payout'));
ALTER TABLE sandbox_bank.transfers DROP CONSTRAINT transfers_interbank_destination;
ALTER TABLE sandbox_bank.transfers ADD CONSTRAINT transfers_interbank_destination
  CHECK ((kind IN ('interbank', 'payout')) = (destination_account_number IS NOT NULL AND destination_bank_code IS NOT NULL));

CREATE TABLE outbound_transfers (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  client_reference text NOT NULL CHECK (length(client_reference) BETWEEN 1 AND 64),
  -- Hash of the request, so that the same clientReference with another body is a conflict (409).
  request_hash text NOT NULL,
  -- pending: accepted, not yet with the provider; submitted: the provider accepted it; unknown:
  -- the requery schedule ran out without a final answer; confirmed and failed are terminal.
  state text NOT NULL CHECK (state IN ('pending', 'submitted', 'confirmed', 'failed', 'unknown')),
  consumer_id text CHECK (length(consumer_id) <= 64),
  provider text NOT NULL REFERENCES providers (name),
  brr text CHECK (brr ~ '^BRR[0-9]{17}$'),
  provider_session_id text,
  provider_response_code text,
  provider_response_message text,
  failure_reason jsonb,
  settlement_account_name text,
  -- How the payout travels, as recorded when the provider accepted it (e.g. {"scheme":"NIP"}).
  rail jsonb,
  beneficiary_account_number text NOT NULL CHECK (beneficiary_account_number ~ '^[0-9]{10}$'),
  beneficiary_bank_code text NOT NULL CHECK (beneficiary_bank_code ~ '^[0-9]{3,6}$'),
  beneficiary_account_name text NOT NULL CHECK (length(beneficiary_account_name) BETWEEN 1 AND 100),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  currency text NOT NULL,
  narration text CHECK (length(narration) <= 100),
  callback_url text,
  creator_metadata jsonb NOT NULL,
  -- The ledger's pending transfer holding the amount on the float while the provider decides.
  hold_transfer_id uuid,
  requery_attempts integer NOT NULL DEFAULT 0,
  requery_deadline_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  state_changed_at timestamptz NOT NULL DEFAULT now(),
  terminal_at timestamptz,
  CONSTRAINT outbound_transfers_one_per_reference UNIQUE (partner_id, client_reference),
  CONSTRAINT outbound_transfers_terminal_when_final CHECK ((state IN ('confirmed', 'failed')) = (terminal_at IS NOT NULL))
);

CREATE INDEX outbound_transfers_by_partner ON outbound_transfers (partner_id, id DESC);
