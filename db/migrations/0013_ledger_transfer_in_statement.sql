-- One ledger transfer inside a business operation's own statement (e.g. the UPDATE of a move and
-- the post of its hold, in one round trip and one implicit transaction). It goes through
-- ledger_create_transfers() like every transfer; a refusal raises (SQLSTATE RL001, the result
-- code as its detail) so that the whole statement — the business change with it — rolls back,
-- as a refused transfer rolls back the caller's transaction in src/ledger/service.ts.
CREATE FUNCTION ledger_create_transfer_or_raise(
  p_id uuid, p_debit_id uuid, p_credit_id uuid, p_amount bigint, p_currency text, p_phase text,
  p_pending_id uuid, p_code text, p_timeout_s integer, p_source_type text, p_source_id text
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  result text;
BEGIN
  result := (ledger_create_transfers(ARRAY[p_id], ARRAY[p_debit_id], ARRAY[p_credit_id], ARRAY[p_amount], ARRAY[p_currency], ARRAY[p_phase],
                                     ARRAY[p_pending_id], ARRAY[p_code], ARRAY[p_timeout_s], ARRAY[p_source_type], ARRAY[p_source_id], ARRAY[false]))[1];
  IF result NOT IN ('ok', 'exists') THEN
    RAISE EXCEPTION 'ledger transfer % refused: %', p_id, result USING ERRCODE = 'RL001', DETAIL = result;
  END IF;
  RETURN result;
END
$$;
