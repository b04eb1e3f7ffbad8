-- The ledger's one write path. src/ledger/ calls ledger_create_transfers() and nothing else
-- writes ledger_transfers, ledger_pending_transfers or account totals. Expected failures (a
-- balance too small, an unknown account, a pending transfer already resolved) return a result
-- code and write nothing; an exception means a bug and aborts the caller's transaction.

-- How an existing transfer with the caller's id compares with the retry: 'exists' when it is the
-- same transfer, else the first field that differs.
CREATE FUNCTION ledger_compare_existing(
  existing ledger_transfers, p_debit uuid, p_credit uuid, p_amount bigint, p_currency text,
  p_phase text, p_pending_id uuid, p_code text
) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF existing.phase <> p_phase THEN RETURN 'exists_with_different_phase'; END IF;
  IF existing.pending_id IS DISTINCT FROM p_pending_id THEN RETURN 'exists_with_different_pending_id'; END IF;
  -- A post or void may leave accounts, amount and currency out (they come from the pending transfer).
  IF p_debit IS NOT NULL AND existing.debit_account_id <> p_debit THEN RETURN 'exists_with_different_debit_account_id'; END IF;
  IF p_credit IS NOT NULL AND existing.credit_account_id <> p_credit THEN RETURN 'exists_with_different_credit_account_id'; END IF;
  IF p_amount IS NOT NULL AND existing.amount_kobo <> p_amount THEN RETURN 'exists_with_different_amount'; END IF;
  IF p_currency IS NOT NULL AND existing.currency <> p_currency THEN RETURN 'exists_with_different_currency'; END IF;
  IF existing.code <> p_code THEN RETURN 'exists_with_different_code'; END IF;
  RETURN 'exists';
END
$$;

-- Applies one single-phase or pending transfer. Its accounts are locked already.
CREATE FUNCTION ledger_apply_new_transfer(
  p_id uuid, p_debit uuid, p_credit uuid, p_amount bigint, p_currency text, p_phase text,
  p_code text, p_timeout_s integer, p_source_type text, p_source_id text
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  debit ledger_accounts%ROWTYPE;
  credit ledger_accounts%ROWTYPE;
  debit_booked bigint;
  debit_available bigint;
  credit_booked bigint;
  credit_available bigint;
BEGIN
  IF p_debit = p_credit THEN RETURN 'accounts_must_be_different'; END IF;
  SELECT * INTO debit FROM ledger_accounts WHERE id = p_debit;
  IF NOT FOUND THEN RETURN 'debit_account_not_found'; END IF;
  SELECT * INTO credit FROM ledger_accounts WHERE id = p_credit;
  IF NOT FOUND THEN RETURN 'credit_account_not_found'; END IF;
  IF debit.currency <> p_currency OR credit.currency <> p_currency THEN RETURN 'accounts_must_have_the_transfer_currency'; END IF;
  IF debit.status <> 'open' THEN RETURN 'debit_account_not_open'; END IF;
  IF credit.status <> 'open' THEN RETURN 'credit_account_not_open'; END IF;
  -- The credit side's limit is checked on its locked row first, so that the debit update below
  -- never has to be undone.
  IF credit.credits_must_not_exceed_debits AND credit.credits_pending + credit.credits_posted + p_amount > credit.debits_posted THEN
    RETURN 'exceeds_debits';
  END IF;

  -- Each balance check and its update are one statement.
  IF p_phase = 'single' THEN
    UPDATE ledger_accounts SET debits_posted = debits_posted + p_amount
     WHERE id = p_debit AND (NOT debits_must_not_exceed_credits OR debits_pending + debits_posted + p_amount <= credits_posted)
     RETURNING credits_posted - debits_posted, credits_posted - debits_posted - debits_pending INTO debit_booked, debit_available;
    IF NOT FOUND THEN RETURN 'exceeds_credits'; END IF;
    UPDATE ledger_accounts SET credits_posted = credits_posted + p_amount
     WHERE id = p_credit AND (NOT credits_must_not_exceed_debits OR credits_pending + credits_posted + p_amount <= debits_posted)
     RETURNING credits_posted - debits_posted, credits_posted - debits_posted - debits_pending INTO credit_booked, credit_available;
  ELSE
    UPDATE ledger_accounts SET debits_pending = debits_pending + p_amount
     WHERE id = p_debit AND (NOT debits_must_not_exceed_credits OR debits_pending + debits_posted + p_amount <= credits_posted)
     RETURNING credits_posted - debits_posted, credits_posted - debits_posted - debits_pending INTO debit_booked, debit_available;
    IF NOT FOUND THEN RETURN 'exceeds_credits'; END IF;
    UPDATE ledger_accounts SET credits_pending = credits_pending + p_amount
     WHERE id = p_credit AND (NOT credits_must_not_exceed_debits OR credits_pending + credits_posted + p_amount <= debits_posted)
     RETURNING credits_posted - debits_posted, credits_posted - debits_posted - debits_pending INTO credit_booked, credit_available;
  END IF;
  IF NOT FOUND THEN RAISE EXCEPTION 'ledger: credit side of transfer % failed after its check', p_id; END IF;

  INSERT INTO ledger_transfers (id, debit_account_id, credit_account_id, amount_kobo, currency, phase, code, source_type, source_id,
                                debit_booked_after, debit_available_after, credit_booked_after, credit_available_after)
  VALUES (p_id, p_debit, p_credit, p_amount, p_currency, p_phase, p_code, p_source_type, p_source_id,
          debit_booked, debit_available, credit_booked, credit_available);
  IF p_phase = 'pending' THEN
    INSERT INTO ledger_pending_transfers (transfer_id, status, timeout_at)
    VALUES (p_id, 'pending', CASE WHEN p_timeout_s IS NULL THEN NULL ELSE now() + make_interval(secs => p_timeout_s) END);
  END IF;
  RETURN 'ok';
END
$$;

-- Posts (fully or partly) or voids a pending transfer, exactly once. Its accounts are locked.
CREATE FUNCTION ledger_resolve_pending_transfer(
  p_id uuid, p_debit uuid, p_credit uuid, p_amount bigint, p_currency text, p_phase text,
  p_pending_id uuid, p_code text, p_source_type text, p_source_id text
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  pending ledger_transfers%ROWTYPE;
  pending_status text;
  timed_out boolean;
  amount bigint;
  debit_booked bigint;
  debit_available bigint;
  credit_booked bigint;
  credit_available bigint;
BEGIN
  SELECT * INTO pending FROM ledger_transfers WHERE id = p_pending_id;
  IF NOT FOUND THEN RETURN 'pending_transfer_not_found'; END IF;
  SELECT status, timeout_at IS NOT NULL AND timeout_at <= now() INTO pending_status, timed_out
    FROM ledger_pending_transfers WHERE transfer_id = p_pending_id FOR UPDATE;
  IF NOT FOUND THEN RETURN 'pending_transfer_not_pending'; END IF;
  IF pending_status = 'posted' THEN RETURN 'pending_transfer_already_posted'; END IF;
  IF pending_status = 'voided' THEN RETURN 'pending_transfer_already_voided'; END IF;
  IF pending_status = 'expired' THEN RETURN 'pending_transfer_expired'; END IF;
  IF (p_debit IS NOT NULL AND p_debit <> pending.debit_account_id) OR (p_credit IS NOT NULL AND p_credit <> pending.credit_account_id) THEN
    RETURN 'pending_transfer_has_different_accounts';
  END IF;
  IF p_currency IS NOT NULL AND p_currency <> pending.currency THEN RETURN 'pending_transfer_has_different_currency'; END IF;
  amount := COALESCE(p_amount, pending.amount_kobo);

  IF p_phase = 'post' THEN
    -- Past its timeout a reservation can only be voided (the sweep will, if nobody else does).
    IF timed_out THEN RETURN 'pending_transfer_expired'; END IF;
    IF amount > pending.amount_kobo THEN RETURN 'exceeds_pending_transfer_amount'; END IF;
    -- The whole reservation is released; `amount` of it (all or part) is posted.
    UPDATE ledger_accounts SET debits_pending = debits_pending - pending.amount_kobo, debits_posted = debits_posted + amount
     WHERE id = pending.debit_account_id
     RETURNING credits_posted - debits_posted, credits_posted - debits_posted - debits_pending INTO debit_booked, debit_available;
    UPDATE ledger_accounts SET credits_pending = credits_pending - pending.amount_kobo, credits_posted = credits_posted + amount
     WHERE id = pending.credit_account_id
     RETURNING credits_posted - debits_posted, credits_posted - debits_posted - debits_pending INTO credit_booked, credit_available;
  ELSE
    IF amount <> pending.amount_kobo THEN RETURN 'pending_transfer_has_different_amount'; END IF;
    UPDATE ledger_accounts SET debits_pending = debits_pending - amount
     WHERE id = pending.debit_account_id
     RETURNING credits_posted - debits_posted, credits_posted - debits_posted - debits_pending INTO debit_booked, debit_available;
    UPDATE ledger_accounts SET credits_pending = credits_pending - amount
     WHERE id = pending.credit_account_id
     RETURNING credits_posted - debits_posted, credits_posted - debits_posted - debits_pending INTO credit_booked, credit_available;
  END IF;

  INSERT INTO ledger_transfers (id, debit_account_id, credit_account_id, amount_kobo, currency, phase, pending_id, code, source_type, source_id,
                                debit_booked_after, debit_available_after, credit_booked_after, credit_available_after)
  VALUES (p_id, pending.debit_account_id, pending.credit_account_id, amount, pending.currency, p_phase, p_pending_id, p_code, p_source_type, p_source_id,
          debit_booked, debit_available, credit_booked, credit_available);
  UPDATE ledger_pending_transfers
     SET status = CASE WHEN p_phase = 'post' THEN 'posted' WHEN timed_out THEN 'expired' ELSE 'voided' END,
         resolved_by = p_id, resolved_at = now()
   WHERE transfer_id = p_pending_id;
  RETURN 'ok';
END
$$;

-- Creates a batch of transfers in order and returns one result code per transfer. Every account
-- the batch touches is locked first, in ascending id order, so two batches can never wait on
-- each other in a cycle (no deadlocks, by construction). With p_linked the batch is all or
-- nothing: the failing transfer gets its code and every other one `linked_event_failed`.
CREATE FUNCTION ledger_create_transfers(
  p_ids uuid[], p_debit_ids uuid[], p_credit_ids uuid[], p_amounts bigint[], p_currencies text[],
  p_phases text[], p_pending_ids uuid[], p_codes text[], p_timeouts_s integer[],
  p_source_types text[], p_source_ids text[], p_linked boolean
) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  transfer_count integer := COALESCE(array_length(p_ids, 1), 0);
  results text[] := '{}';
  result text;
  failed_at integer;
  existing ledger_transfers%ROWTYPE;
BEGIN
  PERFORM 1 FROM ledger_accounts
   WHERE id IN (SELECT unnest(p_debit_ids) UNION SELECT unnest(p_credit_ids)
                UNION SELECT debit_account_id FROM ledger_transfers WHERE id = ANY (p_pending_ids)
                UNION SELECT credit_account_id FROM ledger_transfers WHERE id = ANY (p_pending_ids))
   ORDER BY id
   FOR NO KEY UPDATE;

  BEGIN
    FOR i IN 1 .. transfer_count LOOP
      SELECT * INTO existing FROM ledger_transfers WHERE id = p_ids[i];
      IF FOUND THEN
        result := ledger_compare_existing(existing, p_debit_ids[i], p_credit_ids[i], p_amounts[i], p_currencies[i], p_phases[i], p_pending_ids[i], p_codes[i]);
      ELSIF p_phases[i] IN ('single', 'pending') THEN
        result := ledger_apply_new_transfer(p_ids[i], p_debit_ids[i], p_credit_ids[i], p_amounts[i], p_currencies[i], p_phases[i],
                                            p_codes[i], p_timeouts_s[i], p_source_types[i], p_source_ids[i]);
      ELSE
        result := ledger_resolve_pending_transfer(p_ids[i], p_debit_ids[i], p_credit_ids[i], p_amounts[i], p_currencies[i], p_phases[i],
                                                  p_pending_ids[i], p_codes[i], p_source_types[i], p_source_ids[i]);
      END IF;
      results := results || result;
      IF p_linked AND result NOT IN ('ok', 'exists') THEN
        failed_at := i;
        RAISE EXCEPTION USING ERRCODE = 'RL001'; -- rolls back the chain's writes (the block is a subtransaction)
      END IF;
    END LOOP;
  EXCEPTION WHEN SQLSTATE 'RL001' THEN
    results := array_fill('linked_event_failed'::text, ARRAY[transfer_count]);
    results[failed_at] := result;
  END;
  RETURN results;
END
$$;
