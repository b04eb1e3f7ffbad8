-- Every state machine as a table (docs/states.md, docs/design.md §11). The allowed
-- moves of each machine — the same table as its src/<domain>/states.ts, proven equal by
-- test/platform/state-machines.test.ts — and one trigger per guarded column that refuses any
-- change of state the table does not hold. Repos still guard each change with
-- `WHERE status = ANY(allowed)` (a late or racing change finds the row moved and changes nothing);
-- the trigger is what makes a wrong move impossible, whoever writes the row.
--
-- A change is a different value: writing the same state again (a partial payment after another,
-- a requery that finds a transfer still in progress) is no move and is not checked. A terminal
-- state has no row here, so every change out of it is refused. A nullable column starts from
-- NULL (from_state NULL); nothing goes back to NULL. Inserts are not checked: a row is created in
-- the state its create path (or a backfill) decides.
--
-- Cost: when the state column is written with a new value, one call of a PL/pgSQL function doing
-- one lookup in the unique index of a table of about eighty rows, inside the statement (no round
-- trip; measured server side at roughly 10–30 µs per changed row, against 25–110 µs for the
-- one-row UPDATE itself, on a busy 2-core machine); when it is not written, or written unchanged,
-- only the trigger's WHEN comparison runs.
--
-- Not guarded here: the ledger (ledger_accounts.status is guarded by its own facts trigger,
-- closed being for good, and ledger_pending_transfers.status is written only by
-- ledger_create_transfers and checked by `rail ledger verify`), and the sandbox bank's accounts
-- (a simulated bank's own data, active and dormant in both directions).

CREATE TABLE state_transitions (
  machine text NOT NULL,
  from_state text, -- NULL: the column was NULL (a machine that starts on an existing row)
  to_state text NOT NULL,
  CONSTRAINT state_transitions_move UNIQUE NULLS NOT DISTINCT (machine, from_state, to_state)
);

COMMENT ON TABLE state_transitions IS
  'The allowed moves of every state machine (docs/states.md); the same as each src/<domain>/states.ts.';

INSERT INTO state_transitions (machine, from_state, to_state) VALUES
  -- wallet_moves.status
  ('wallet_move', 'pending', 'successful'),
  ('wallet_move', 'pending', 'failed'),
  ('wallet_move', 'pending', 'unknown'),
  ('wallet_move', 'unknown', 'successful'),
  ('wallet_move', 'unknown', 'failed'),
  -- outbound_transfers.state
  ('outbound_transfer', 'pending', 'submitted'),
  ('outbound_transfer', 'pending', 'confirmed'),
  ('outbound_transfer', 'pending', 'failed'),
  ('outbound_transfer', 'pending', 'unknown'),
  ('outbound_transfer', 'submitted', 'confirmed'),
  ('outbound_transfer', 'submitted', 'failed'),
  ('outbound_transfer', 'submitted', 'unknown'),
  ('outbound_transfer', 'unknown', 'confirmed'),
  ('outbound_transfer', 'unknown', 'failed'),
  -- bank_instructions.state
  ('bank_instruction', 'ready', 'sending'),
  ('bank_instruction', 'ready', 'failed'),
  ('bank_instruction', 'sending', 'sending'),
  ('bank_instruction', 'sending', 'sent'),
  ('bank_instruction', 'sending', 'succeeded'),
  ('bank_instruction', 'sending', 'failed'),
  ('bank_instruction', 'sending', 'unknown'),
  ('bank_instruction', 'sent', 'succeeded'),
  ('bank_instruction', 'sent', 'failed'),
  ('bank_instruction', 'sent', 'unknown'),
  ('bank_instruction', 'unknown', 'sending'),
  ('bank_instruction', 'unknown', 'succeeded'),
  ('bank_instruction', 'unknown', 'failed'),
  -- refunds.state
  ('refund', 'pending', 'succeeded'),
  ('refund', 'pending', 'failed'),
  -- settlements.state
  ('settlement', 'pending', 'paid'),
  ('settlement', 'pending', 'failed'),
  -- escrows.status
  ('escrow', 'initiated', 'funded'),
  ('escrow', 'initiated', 'cancelled'),
  ('escrow', 'initiated', 'expired'),
  ('escrow', 'funded', 'released'),
  ('escrow', 'funded', 'cancelled'),
  -- escrows.disbursement_state
  ('escrow_disbursement', NULL, 'pending'),
  ('escrow_disbursement', 'pending', 'paid'),
  ('escrow_disbursement', 'pending', 'failed'),
  ('escrow_disbursement', 'failed', 'pending'),
  -- escrows.refund_state
  ('escrow_refund', NULL, 'pending'),
  ('escrow_refund', 'pending', 'refunded'),
  ('escrow_refund', 'pending', 'failed'),
  ('escrow_refund', 'failed', 'pending'),
  -- escrow_refunds.state
  ('escrow_credit_refund', 'pending', 'succeeded'),
  ('escrow_credit_refund', 'pending', 'failed'),
  -- invoices.status
  ('invoice', 'draft', 'published'),
  ('invoice', 'draft', 'cancelled'),
  ('invoice', 'published', 'partially_paid'),
  ('invoice', 'published', 'paid'),
  ('invoice', 'published', 'cancelled'),
  ('invoice', 'partially_paid', 'paid'),
  ('invoice', 'partially_paid', 'cancelled'),
  -- payment_intents.status
  ('payment_intent', 'pending', 'partially_paid'),
  ('payment_intent', 'pending', 'paid'),
  ('payment_intent', 'pending', 'overpaid'),
  ('payment_intent', 'pending', 'expired'),
  ('payment_intent', 'partially_paid', 'paid'),
  ('payment_intent', 'partially_paid', 'overpaid'),
  ('payment_intent', 'partially_paid', 'expired'),
  ('payment_intent', 'paid', 'overpaid'),
  -- inbound_credits.status
  ('inbound_credit', 'received', 'applied'),
  ('inbound_credit', 'received', 'unmatched'),
  ('inbound_credit', 'received', 'unattributed'),
  ('inbound_credit', 'unmatched', 'refund_pending'),
  ('inbound_credit', 'unmatched', 'assigned'),
  ('inbound_credit', 'refund_pending', 'refunded'),
  ('inbound_credit', 'refund_pending', 'unmatched'),
  -- virtual_accounts.status
  ('virtual_account', 'active', 'archived'),
  -- event_deliveries.status
  ('event_delivery', 'pending', 'delivered'),
  ('event_delivery', 'pending', 'failed'),
  -- events.delivery_status
  ('event', 'pending', 'delivered'),
  ('event', 'pending', 'failed'),
  ('event', 'delivered', 'pending'),
  ('event', 'failed', 'pending'),
  ('event', 'skipped', 'pending');

-- Whether `machine` may move from `from_state` to `to_state`: one lookup in the table's unique
-- index. PL/pgSQL, so that its two plans are prepared once per connection and the trigger's WHEN
-- holds only a call (a SQL function would be inlined there and its body parsed again for every
-- statement: measured about three times the cost).
CREATE FUNCTION state_transition_allowed(machine text, from_state text, to_state text) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF from_state IS NULL THEN
    RETURN EXISTS (SELECT 1 FROM state_transitions t
                    WHERE t.machine = state_transition_allowed.machine AND t.from_state IS NULL AND t.to_state = state_transition_allowed.to_state);
  END IF;
  RETURN EXISTS (SELECT 1 FROM state_transitions t
                  WHERE t.machine = state_transition_allowed.machine AND t.from_state = state_transition_allowed.from_state
                    AND t.to_state = state_transition_allowed.to_state);
END
$$;

-- Raises the refusal: reached only for a move the table does not hold. Arguments: the machine and
-- the column it lives in.
CREATE FUNCTION refuse_state_transition() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  from_state text := to_jsonb(OLD) ->> TG_ARGV[1];
  to_state text := to_jsonb(NEW) ->> TG_ARGV[1];
BEGIN
  RAISE EXCEPTION '%: % % → % refused (not a move of its state machine)', TG_ARGV[0], TG_TABLE_NAME || '.' || TG_ARGV[1],
      coalesce(from_state, 'NULL'), coalesce(to_state, 'NULL')
    USING ERRCODE = 'RS001', DETAIL = format('id %s', to_jsonb(OLD) ->> 'id'),
          HINT = 'the allowed moves are in state_transitions (src/<domain>/states.ts)';
END
$$;

CREATE TRIGGER wallet_moves_status_machine BEFORE UPDATE OF status ON wallet_moves FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NOT state_transition_allowed('wallet_move', OLD.status, NEW.status))
  EXECUTE FUNCTION refuse_state_transition('wallet_move', 'status');

CREATE TRIGGER outbound_transfers_state_machine BEFORE UPDATE OF state ON outbound_transfers FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state AND NOT state_transition_allowed('outbound_transfer', OLD.state, NEW.state))
  EXECUTE FUNCTION refuse_state_transition('outbound_transfer', 'state');

CREATE TRIGGER bank_instructions_state_machine BEFORE UPDATE OF state ON bank_instructions FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state AND NOT state_transition_allowed('bank_instruction', OLD.state, NEW.state))
  EXECUTE FUNCTION refuse_state_transition('bank_instruction', 'state');

CREATE TRIGGER refunds_state_machine BEFORE UPDATE OF state ON refunds FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state AND NOT state_transition_allowed('refund', OLD.state, NEW.state))
  EXECUTE FUNCTION refuse_state_transition('refund', 'state');

CREATE TRIGGER settlements_state_machine BEFORE UPDATE OF state ON settlements FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state AND NOT state_transition_allowed('settlement', OLD.state, NEW.state))
  EXECUTE FUNCTION refuse_state_transition('settlement', 'state');

CREATE TRIGGER escrows_status_machine BEFORE UPDATE OF status ON escrows FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NOT state_transition_allowed('escrow', OLD.status, NEW.status))
  EXECUTE FUNCTION refuse_state_transition('escrow', 'status');

CREATE TRIGGER escrows_disbursement_state_machine BEFORE UPDATE OF disbursement_state ON escrows FOR EACH ROW
  WHEN (OLD.disbursement_state IS DISTINCT FROM NEW.disbursement_state AND NOT state_transition_allowed('escrow_disbursement', OLD.disbursement_state, NEW.disbursement_state))
  EXECUTE FUNCTION refuse_state_transition('escrow_disbursement', 'disbursement_state');

CREATE TRIGGER escrows_refund_state_machine BEFORE UPDATE OF refund_state ON escrows FOR EACH ROW
  WHEN (OLD.refund_state IS DISTINCT FROM NEW.refund_state AND NOT state_transition_allowed('escrow_refund', OLD.refund_state, NEW.refund_state))
  EXECUTE FUNCTION refuse_state_transition('escrow_refund', 'refund_state');

CREATE TRIGGER escrow_refunds_state_machine BEFORE UPDATE OF state ON escrow_refunds FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state AND NOT state_transition_allowed('escrow_credit_refund', OLD.state, NEW.state))
  EXECUTE FUNCTION refuse_state_transition('escrow_credit_refund', 'state');

CREATE TRIGGER invoices_status_machine BEFORE UPDATE OF status ON invoices FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NOT state_transition_allowed('invoice', OLD.status, NEW.status))
  EXECUTE FUNCTION refuse_state_transition('invoice', 'status');

CREATE TRIGGER payment_intents_status_machine BEFORE UPDATE OF status ON payment_intents FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NOT state_transition_allowed('payment_intent', OLD.status, NEW.status))
  EXECUTE FUNCTION refuse_state_transition('payment_intent', 'status');

CREATE TRIGGER inbound_credits_status_machine BEFORE UPDATE OF status ON inbound_credits FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NOT state_transition_allowed('inbound_credit', OLD.status, NEW.status))
  EXECUTE FUNCTION refuse_state_transition('inbound_credit', 'status');

CREATE TRIGGER virtual_accounts_status_machine BEFORE UPDATE OF status ON virtual_accounts FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NOT state_transition_allowed('virtual_account', OLD.status, NEW.status))
  EXECUTE FUNCTION refuse_state_transition('virtual_account', 'status');

CREATE TRIGGER event_deliveries_status_machine BEFORE UPDATE OF status ON event_deliveries FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NOT state_transition_allowed('event_delivery', OLD.status, NEW.status))
  EXECUTE FUNCTION refuse_state_transition('event_delivery', 'status');

CREATE TRIGGER events_delivery_status_machine BEFORE UPDATE OF delivery_status ON events FOR EACH ROW
  WHEN (OLD.delivery_status IS DISTINCT FROM NEW.delivery_status AND NOT state_transition_allowed('event', OLD.delivery_status, NEW.delivery_status))
  EXECUTE FUNCTION refuse_state_transition('event', 'delivery_status');

