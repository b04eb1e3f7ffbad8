-- A payout the provider reversed after it succeeded (docs/decisions/0016-payout-reversals.md). The
-- provider paid, then took the money back (a Paystack transfer.reversed, a Monnify
-- REVERSED_DISBURSEMENT): the bank instruction stays `succeeded` (what the bank did first is not
-- rewritten) and carries a reversal mark, set once, when the provider's own answer to a requery
-- says so; its outbound transfer moves confirmed → reversed, with its own ledger transfer giving
-- the amount back to the float.

-- The instruction's mark: when the reversal was recorded and what the provider answered. Only a
-- succeeded instruction is ever reversed; the mark is set once (the writer's guard) and never cleared.
ALTER TABLE bank_instructions
  ADD COLUMN reversed_at timestamptz,
  ADD COLUMN reversal_response_code text CHECK (length(reversal_response_code) <= 16),
  ADD COLUMN reversal_response_message text CHECK (length(reversal_response_message) <= 500),
  ADD CONSTRAINT bank_instructions_only_succeeded_reverse CHECK (reversed_at IS NULL OR state = 'succeeded');

-- The outbound transfer's new terminal state, reached only from confirmed (src/outbound-transfers/states.ts).
INSERT INTO state_transitions (machine, from_state, to_state) VALUES ('outbound_transfer', 'confirmed', 'reversed');

ALTER TABLE outbound_transfers DROP CONSTRAINT outbound_transfers_state_check;
ALTER TABLE outbound_transfers ADD CONSTRAINT outbound_transfers_state_check
  CHECK (state IN ('pending', 'submitted', 'confirmed', 'failed', 'unknown', 'reversed'));

-- A reversed transfer ended too: it keeps a terminal moment (the reversal's).
ALTER TABLE outbound_transfers DROP CONSTRAINT outbound_transfers_terminal_when_final;
ALTER TABLE outbound_transfers ADD CONSTRAINT outbound_transfers_terminal_when_final
  CHECK ((state IN ('confirmed', 'failed', 'reversed')) = (terminal_at IS NOT NULL));

-- The timeline records the new state like any other (migration 0045's trigger).
ALTER TABLE outbound_transfer_states DROP CONSTRAINT outbound_transfer_states_state_check;
ALTER TABLE outbound_transfer_states ADD CONSTRAINT outbound_transfer_states_state_check
  CHECK (state IN ('pending', 'submitted', 'confirmed', 'failed', 'unknown', 'reversed'));
