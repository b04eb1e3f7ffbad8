-- One payment pipeline: every instruction Rail gives a bank (a wallet move, an outbound transfer,
-- a refund) is a row here, worked by one module (src/payments). Its state is committed before each
-- call to the bank, so a worker that finds an instruction already `sending` asks the bank what
-- happened before it does anything else; at most one worker holds an instruction at a time (a
-- lease, fenced by its token). The owner's row (wallet_moves, outbound_transfers) keeps the
-- business state the partner sees; the pipeline tells the owner of each change, in the same
-- transaction.
CREATE TABLE bank_instructions (
  -- The instruction's id is its owner's id and the reference the bank sees: a resend under the
  -- same reference is a duplicate at the bank, never a second payment.
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  owner_type text NOT NULL CHECK (owner_type IN ('wallet_move', 'outbound_transfer')),
  provider text NOT NULL REFERENCES providers (name),
  -- What the bank is told to do: fund a wallet account, spend from it, move between two wallet
  -- accounts, pay out from a wallet account to any bank, pay out from the merchant's funds.
  operation text NOT NULL CHECK (operation IN ('credit', 'debit', 'book', 'interbank', 'payout')),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  narration text CHECK (length(narration) <= 100),
  debit_account_number text CHECK (debit_account_number ~ '^[0-9]{10}$'),
  credit_account_number text CHECK (credit_account_number ~ '^[0-9]{10}$'),
  destination_bank_code text CHECK (destination_bank_code ~ '^[0-9]{3,6}$'),
  destination_account_number text CHECK (destination_account_number ~ '^[0-9]{10}$'),
  -- Name enquiry happens once, before the first send, when the provider checks names; its answer
  -- is kept. The name the caller gave, when there is one, must name the holder (name_mismatch).
  name_check boolean NOT NULL,
  expected_account_name text CHECK (length(expected_account_name) <= 100),
  verified_account_name text,
  -- ready: nothing sent yet; sending: a send is committed and its outcome not yet known; sent: the
  -- bank has it in progress; unknown: the requery schedule ran out (an operator decides);
  -- succeeded and failed are final.
  state text NOT NULL CHECK (state IN ('ready', 'sending', 'sent', 'succeeded', 'failed', 'unknown')),
  -- Sends made under this reference; bounded (a bank that never receives it fails it).
  send_attempts integer NOT NULL DEFAULT 0 CHECK (send_attempts >= 0),
  -- When the last send was committed: "no record" soon after a send may be that send still in flight.
  last_sent_at timestamptz,
  requery_attempts integer NOT NULL DEFAULT 0 CHECK (requery_attempts >= 0),
  -- The requery schedule of this instruction (live or sandbox), fixed when it was created.
  requery_first_delay_ms integer NOT NULL CHECK (requery_first_delay_ms > 0),
  deadline_at timestamptz NOT NULL,
  -- When the pipeline next acts on it; the sweep finds instructions left past it by a dead process.
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- The worker holding the instruction: every write of a step is fenced by its token.
  lease_token uuid,
  lease_expires_at timestamptz,
  provider_reference text,
  response_code text,
  response_message text,
  -- Why it failed: name_mismatch, name_enquiry_failed, provider_declined, not_received,
  -- provider_unavailable, operator.
  failure_code text,
  failure_message text,
  -- An operator's decision on an unknown instruction: who, what, why, when.
  resolution jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  state_changed_at timestamptz NOT NULL DEFAULT now(),
  terminal_at timestamptz,
  CONSTRAINT bank_instructions_terminal_when_final CHECK ((state IN ('succeeded', 'failed')) = (terminal_at IS NOT NULL)),
  CONSTRAINT bank_instructions_failure_when_failed CHECK ((state = 'failed') = (failure_code IS NOT NULL))
);

-- The sweep reads only instructions in flight.
CREATE INDEX bank_instructions_in_flight ON bank_instructions (next_attempt_at) WHERE state IN ('ready', 'sending', 'sent');

-- Moves and transfers in flight when this migration runs join the pipeline. One not final whose
-- fate is unclear is `sending`: the bank is asked first, and a reference it never saw is sent
-- again (its duplicate check makes that safe). A submitted transfer is `sent`; unknown stays
-- unknown. Each keeps its deadline.
INSERT INTO bank_instructions (id, partner_id, owner_type, provider, operation, amount_kobo, narration, debit_account_number, credit_account_number,
                               destination_bank_code, destination_account_number, name_check, expected_account_name, state, send_attempts,
                               requery_attempts, requery_first_delay_ms, deadline_at)
SELECT m.id, m.partner_id, 'wallet_move', m.provider,
       CASE m.type WHEN 'wallet_transfer' THEN 'book' WHEN 'bank_payout' THEN 'interbank' ELSE m.type END,
       m.amount_kobo, m.narration,
       CASE WHEN m.type <> 'credit' THEN w.account_number END,
       CASE m.type WHEN 'credit' THEN w.account_number WHEN 'wallet_transfer' THEN d.account_number END,
       m.destination_bank_code, m.destination_account_number, false, m.destination_account_name,
       CASE m.status WHEN 'unknown' THEN 'unknown' ELSE 'sending' END, 1, m.requery_attempts, 5000, m.requery_deadline_at
  FROM wallet_moves m JOIN wallets w ON w.id = m.wallet_id LEFT JOIN wallets d ON d.id = m.destination_wallet_id
 WHERE m.status IN ('pending', 'unknown');
INSERT INTO bank_instructions (id, partner_id, owner_type, provider, operation, amount_kobo, narration, destination_bank_code, destination_account_number,
                               name_check, expected_account_name, state, send_attempts, requery_attempts, requery_first_delay_ms, deadline_at)
SELECT t.id, t.partner_id, 'outbound_transfer', t.provider, 'payout', t.amount_kobo, t.narration, t.beneficiary_bank_code, t.beneficiary_account_number,
       p.name_check, t.beneficiary_account_name,
       CASE t.state WHEN 'pending' THEN 'sending' WHEN 'submitted' THEN 'sent' ELSE 'unknown' END,
       1, t.requery_attempts, 5000, t.requery_deadline_at
  FROM outbound_transfers t JOIN providers p ON p.name = t.provider
 WHERE t.state IN ('pending', 'submitted', 'unknown');

-- The owners no longer keep a schedule of their own: the pipeline's row does.
DROP INDEX wallet_moves_unanswered;
ALTER TABLE wallet_moves DROP COLUMN requery_attempts, DROP COLUMN requery_deadline_at;
ALTER TABLE outbound_transfers DROP COLUMN requery_attempts, DROP COLUMN requery_deadline_at;

-- Where an outbound transfer's money is held from (the float, or suspense for a refund of an
-- unmatched credit: a refund never passes through the partner's float), and why Rail made it.
ALTER TABLE outbound_transfers
  ADD COLUMN source_account_id uuid REFERENCES ledger_accounts (id),
  ADD COLUMN origin_type text CHECK (origin_type IN ('partner', 'refund')),
  ADD COLUMN origin_id uuid;
UPDATE outbound_transfers SET origin_type = 'partner';
ALTER TABLE outbound_transfers ALTER COLUMN origin_type SET NOT NULL, ALTER COLUMN origin_type SET DEFAULT 'partner';
