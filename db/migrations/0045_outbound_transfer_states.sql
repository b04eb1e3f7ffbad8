-- Every state an outbound transfer has been in, and when: the timeline the dashboard shows
-- (pending → submitted → confirmed, or through unknown), written by the database itself as the
-- state column is, so no write path can change a state without its record. The row's own moment
-- is used (created_at for the first state, state_changed_at for each change), so the history and
-- the transfer always agree. A state written again unchanged is no change and adds nothing.
CREATE TABLE outbound_transfer_states (
  transfer_id uuid NOT NULL REFERENCES outbound_transfers (id),
  seq bigint GENERATED ALWAYS AS IDENTITY,
  state text NOT NULL CHECK (state IN ('pending', 'submitted', 'confirmed', 'failed', 'unknown')),
  at timestamptz NOT NULL,
  PRIMARY KEY (transfer_id, seq)
);

COMMENT ON TABLE outbound_transfer_states IS
  'Each state of an outbound transfer with when it began, oldest first by seq; written by triggers on outbound_transfers.';

CREATE FUNCTION record_outbound_transfer_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO outbound_transfer_states (transfer_id, state, at)
  VALUES (NEW.id, NEW.state, CASE WHEN TG_OP = 'INSERT' THEN NEW.created_at ELSE NEW.state_changed_at END);
  RETURN NULL;
END
$$;

CREATE TRIGGER outbound_transfers_state_created AFTER INSERT ON outbound_transfers FOR EACH ROW
  EXECUTE FUNCTION record_outbound_transfer_state();

CREATE TRIGGER outbound_transfers_state_changed AFTER UPDATE OF state ON outbound_transfers FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state)
  EXECUTE FUNCTION record_outbound_transfer_state();

-- Transfers made before the history was kept: their first state, and the one they are in now.
-- What came between (a submitted before a confirmed) was not recorded and is not invented.
INSERT INTO outbound_transfer_states (transfer_id, state, at)
SELECT id, 'pending', created_at FROM outbound_transfers ORDER BY created_at, id;
INSERT INTO outbound_transfer_states (transfer_id, state, at)
SELECT id, state, state_changed_at FROM outbound_transfers WHERE state <> 'pending' ORDER BY state_changed_at, id;
