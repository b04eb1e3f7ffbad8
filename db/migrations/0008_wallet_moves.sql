-- Wallet moves (docs/contracts/wallets.md): credit, debit and wallet transfer, each idempotent on the partner's
-- reference. A move is recorded before the provider is called (so a crash mid-call is found and
-- resolved by requery), and its ledger transfers are posted in the same transaction as each
-- change of its status.
CREATE TABLE wallet_moves (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  reference text NOT NULL CHECK (length(reference) BETWEEN 1 AND 64),
  -- Hash of the request, so that the same reference with another body is a conflict (409).
  request_hash text NOT NULL,
  type text NOT NULL CHECK (type IN ('credit', 'debit', 'wallet_transfer')),
  -- pending: the provider is being asked; unknown: it has not given a final answer, requery
  -- decides; successful and failed are final.
  status text NOT NULL CHECK (status IN ('pending', 'successful', 'failed', 'unknown')),
  wallet_id uuid NOT NULL REFERENCES wallets (id),
  destination_wallet_id uuid REFERENCES wallets (id),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  currency text NOT NULL,
  narration text CHECK (length(narration) <= 100),
  provider text NOT NULL REFERENCES providers (name),
  provider_reference text,
  response_code text,
  response_message text,
  -- The ledger's pending transfer holding the amount while the provider decides (debit, wallet transfer).
  hold_transfer_id uuid,
  -- Requeries made so far, and when the requery schedule gives up (the move then stays unknown).
  requery_attempts integer NOT NULL DEFAULT 0,
  requery_deadline_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  CONSTRAINT wallet_moves_one_per_reference UNIQUE (partner_id, reference),
  CONSTRAINT wallet_moves_destination_for_transfers CHECK ((type = 'wallet_transfer') = (destination_wallet_id IS NOT NULL)),
  CONSTRAINT wallet_moves_completed_when_final CHECK ((status IN ('successful', 'failed')) = (completed_at IS NOT NULL))
);

CREATE INDEX wallet_moves_by_wallet ON wallet_moves (wallet_id, created_at);
