-- A retry must repeat everything about the transfer it retries. ledger_compare_existing compared
-- the accounts, amount, currency, phase, pending id and code; a retry that named another business
-- object (source type or id) or, for a pending transfer, another timeout was answered `exists`, and
-- a post retried without an amount (which posts the whole reservation) matched a partial post.
-- Each is now its own result: exists_with_different_source_type, exists_with_different_source_id,
-- exists_with_different_timeout, and exists_with_different_amount for the post.
--
-- The optimistic path (no look-up of stored ids) also stops keeping a record of the batch's own
-- transfers by id, twelve array writes per transfer: a batch that holds an id twice is sent to the
-- look-up path at once instead, where that record answers the second one as a retry.

DROP FUNCTION ledger_compare_existing(uuid, uuid, bigint, text, text, uuid, text, uuid, uuid, bigint, text, text, uuid, text);

-- How a known transfer with the caller's id compares with the retry: 'exists' when it is the
-- same transfer, else the first field that differs. A post or void may leave accounts, amount
-- and currency out (they come from the pending transfer): a post without an amount posts all of
-- e_pending_amount, the amount its pending transfer reserved.
CREATE FUNCTION ledger_compare_existing(
  e_debit uuid, e_credit uuid, e_amount bigint, e_currency text, e_phase text, e_pending_id uuid, e_code text,
  e_source_type text, e_source_id text, e_timeout_s integer, e_pending_amount bigint,
  p_debit uuid, p_credit uuid, p_amount bigint, p_currency text, p_phase text, p_pending_id uuid, p_code text,
  p_source_type text, p_source_id text, p_timeout_s integer
) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF e_phase <> p_phase THEN RETURN 'exists_with_different_phase'; END IF;
  IF e_pending_id IS DISTINCT FROM p_pending_id THEN RETURN 'exists_with_different_pending_id'; END IF;
  IF p_debit IS NOT NULL AND e_debit <> p_debit THEN RETURN 'exists_with_different_debit_account_id'; END IF;
  IF p_credit IS NOT NULL AND e_credit <> p_credit THEN RETURN 'exists_with_different_credit_account_id'; END IF;
  IF e_amount <> COALESCE(p_amount, e_pending_amount, e_amount) THEN RETURN 'exists_with_different_amount'; END IF;
  IF p_currency IS NOT NULL AND e_currency <> p_currency THEN RETURN 'exists_with_different_currency'; END IF;
  IF e_code <> p_code THEN RETURN 'exists_with_different_code'; END IF;
  IF e_source_type IS DISTINCT FROM p_source_type THEN RETURN 'exists_with_different_source_type'; END IF;
  IF e_source_id IS DISTINCT FROM p_source_id THEN RETURN 'exists_with_different_source_id'; END IF;
  IF e_timeout_s IS DISTINCT FROM p_timeout_s THEN RETURN 'exists_with_different_timeout'; END IF;
  RETURN 'exists';
END
$$;

-- Applies a batch (see ledger_create_transfers in 0003): as before, with the comparisons above.
CREATE OR REPLACE FUNCTION ledger_apply_batch(
  p_ids uuid[], p_debit_ids uuid[], p_credit_ids uuid[], p_amounts bigint[], p_currencies text[],
  p_phases text[], p_pending_ids uuid[], p_codes text[], p_timeouts_s integer[],
  p_source_types text[], p_source_ids text[], p_linked boolean[], p_look_up_existing boolean
) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  transfer_count integer := COALESCE(array_length(p_ids, 1), 0);
  results text[] := array_fill(NULL::text, ARRAY[transfer_count]);
  result text;
  lock_ids uuid[];
  -- The batch's accounts, locked, with their totals as the batch changes them.
  acc_id uuid[]; acc_currency text[]; acc_status text[]; acc_debits_limited boolean[]; acc_credits_limited boolean[];
  acc_dp bigint[]; acc_dpo bigint[]; acc_cp bigint[]; acc_cpo bigint[];
  acc_changed boolean[];
  -- Transfers known by id: those already stored with an id of this batch, then those the batch creates.
  known_id uuid[]; known_debit uuid[]; known_credit uuid[]; known_amount bigint[]; known_currency text[];
  known_phase text[]; known_pending uuid[]; known_code text[]; known_source_type text[]; known_source_id text[];
  known_timeout_s integer[]; known_pending_amount bigint[];
  -- Pending transfers the batch resolves or creates, with their state.
  pen_id uuid[]; pen_debit uuid[]; pen_credit uuid[]; pen_amount bigint[]; pen_currency text[];
  pen_status text[]; pen_timed_out boolean[]; pen_timeout_at timestamptz[]; pen_is_new boolean[];
  pen_resolved_by uuid[]; pen_changed boolean[];
  -- The new transfers, in order.
  out_id uuid[] := '{}'; out_debit uuid[] := '{}'; out_credit uuid[] := '{}'; out_amount bigint[] := '{}';
  out_currency text[] := '{}'; out_phase text[] := '{}'; out_pending uuid[] := '{}'; out_code text[] := '{}';
  out_source_type text[] := '{}'; out_source_id text[] := '{}';
  out_debit_booked bigint[] := '{}'; out_debit_available bigint[] := '{}';
  out_credit_booked bigint[] := '{}'; out_credit_available bigint[] := '{}';
  out_count integer := 0;
  has_resolutions boolean;
  d integer; c integer; k integer; p integer;
  i integer := 1;
  -- The open chain, if any: where it started and the state to restore if it fails.
  chain_start integer;
  chain_end integer;
  saved_dp bigint[]; saved_dpo bigint[]; saved_cp bigint[]; saved_cpo bigint[]; saved_acc_changed boolean[];
  saved_pen_status text[]; saved_pen_resolved_by uuid[]; saved_pen_changed boolean[];
  saved_pen_count integer; saved_known_count integer; saved_out_count integer;
  -- Without the look-up the batch keeps no record of its own transfers by id: one with an id
  -- twice goes to the look-up path at once.
  track_known boolean := p_look_up_existing;
  amount bigint;
BEGIN
  -- 1. Lock every account of the batch in ascending id order and load its totals. (The ids are
  -- gathered first: `id = ANY (array)` is an index scan whatever the batch size.)
  has_resolutions := array_remove(p_pending_ids, NULL) <> '{}';
  IF has_resolutions THEN
    lock_ids := ARRAY(SELECT unnest(p_debit_ids) UNION SELECT unnest(p_credit_ids)
                      UNION SELECT debit_account_id FROM ledger_transfers WHERE id = ANY (p_pending_ids)
                      UNION SELECT credit_account_id FROM ledger_transfers WHERE id = ANY (p_pending_ids));
  ELSE
    lock_ids := ARRAY(SELECT unnest(p_debit_ids) UNION SELECT unnest(p_credit_ids));
  END IF;
  SELECT COALESCE(array_agg(a.id ORDER BY a.id), '{}'), array_agg(a.currency ORDER BY a.id), array_agg(a.status ORDER BY a.id),
         array_agg(a.debits_must_not_exceed_credits ORDER BY a.id), array_agg(a.credits_must_not_exceed_debits ORDER BY a.id),
         array_agg(a.debits_pending ORDER BY a.id), array_agg(a.debits_posted ORDER BY a.id),
         array_agg(a.credits_pending ORDER BY a.id), array_agg(a.credits_posted ORDER BY a.id)
    INTO acc_id, acc_currency, acc_status, acc_debits_limited, acc_credits_limited, acc_dp, acc_dpo, acc_cp, acc_cpo
    FROM (SELECT * FROM ledger_accounts WHERE id = ANY (lock_ids) ORDER BY id FOR NO KEY UPDATE) a;
  acc_changed := array_fill(false, ARRAY[COALESCE(array_length(acc_id, 1), 0)]);

  -- 2. Transfers that already exist with an id of this batch (idempotent retries), with all that a
  -- retry must repeat: a pending transfer's timeout (timeout_at and created_at share the
  -- transaction's now()), and for a post the amount it reserved (a post without an amount posts it all).
  IF p_look_up_existing THEN
    SELECT COALESCE(array_agg(t.id), '{}'), array_agg(t.debit_account_id), array_agg(t.credit_account_id), array_agg(t.amount_kobo),
           array_agg(t.currency), array_agg(t.phase), array_agg(t.pending_id), array_agg(t.code), array_agg(t.source_type), array_agg(t.source_id),
           array_agg(extract(epoch FROM s.timeout_at - t.created_at)::integer), array_agg(reserved.amount_kobo)
      INTO known_id, known_debit, known_credit, known_amount, known_currency, known_phase, known_pending, known_code, known_source_type, known_source_id,
           known_timeout_s, known_pending_amount
      FROM ledger_transfers t
      LEFT JOIN ledger_pending_transfers s ON s.transfer_id = t.id
      LEFT JOIN ledger_transfers reserved ON reserved.id = t.pending_id
     WHERE t.id = ANY (p_ids);
  ELSE
    IF transfer_count > 1 AND (SELECT count(DISTINCT id) FROM unnest(p_ids) AS id) < transfer_count THEN
      RAISE unique_violation USING MESSAGE = 'ledger: batch holds one id twice';
    END IF;
    known_id := '{}';
  END IF;

  -- 3. Pending transfers the batch resolves, their state locked (in id order).
  IF has_resolutions THEN
  SELECT COALESCE(array_agg(t.id ORDER BY t.id), '{}'), array_agg(t.debit_account_id ORDER BY t.id), array_agg(t.credit_account_id ORDER BY t.id),
         array_agg(t.amount_kobo ORDER BY t.id), array_agg(t.currency ORDER BY t.id), array_agg(s.status ORDER BY t.id),
         array_agg(s.timeout_at IS NOT NULL AND s.timeout_at <= now() ORDER BY t.id), array_agg(s.timeout_at ORDER BY t.id)
    INTO pen_id, pen_debit, pen_credit, pen_amount, pen_currency, pen_status, pen_timed_out, pen_timeout_at
    FROM ledger_transfers t
    JOIN (SELECT transfer_id, status, timeout_at FROM ledger_pending_transfers
           WHERE transfer_id = ANY (p_pending_ids) ORDER BY transfer_id FOR UPDATE) s ON s.transfer_id = t.id;
  ELSE
    pen_id := '{}';
  END IF;
  pen_is_new := array_fill(false, ARRAY[COALESCE(array_length(pen_id, 1), 0)]);
  pen_changed := pen_is_new;
  pen_resolved_by := array_fill(NULL::uuid, ARRAY[COALESCE(array_length(pen_id, 1), 0)]);

  -- 4. Check and apply each transfer, in order, in memory.
  WHILE i <= transfer_count LOOP
    IF chain_start IS NULL AND COALESCE(p_linked[i], false) THEN
      chain_start := i;
      saved_dp := acc_dp; saved_dpo := acc_dpo; saved_cp := acc_cp; saved_cpo := acc_cpo; saved_acc_changed := acc_changed;
      saved_pen_status := pen_status; saved_pen_resolved_by := pen_resolved_by; saved_pen_changed := pen_changed;
      saved_pen_count := COALESCE(array_length(pen_id, 1), 0);
      saved_known_count := COALESCE(array_length(known_id, 1), 0);
      saved_out_count := out_count;
    END IF;
    result := NULL;
    k := array_position(known_id, p_ids[i]);
    IF k IS NOT NULL THEN
      result := ledger_compare_existing(known_debit[k], known_credit[k], known_amount[k], known_currency[k], known_phase[k], known_pending[k], known_code[k],
                                        known_source_type[k], known_source_id[k], known_timeout_s[k], known_pending_amount[k],
                                        p_debit_ids[i], p_credit_ids[i], p_amounts[i], p_currencies[i], p_phases[i], p_pending_ids[i], p_codes[i],
                                        p_source_types[i], p_source_ids[i], p_timeouts_s[i]);
    ELSIF p_phases[i] IN ('single', 'pending') THEN
      amount := p_amounts[i];
      d := array_position(acc_id, p_debit_ids[i]);
      c := array_position(acc_id, p_credit_ids[i]);
      IF p_debit_ids[i] = p_credit_ids[i] THEN result := 'accounts_must_be_different';
      ELSIF d IS NULL THEN result := 'debit_account_not_found';
      ELSIF c IS NULL THEN result := 'credit_account_not_found';
      ELSIF acc_currency[d] <> p_currencies[i] OR acc_currency[c] <> p_currencies[i] THEN result := 'accounts_must_have_the_transfer_currency';
      ELSIF acc_status[d] <> 'open' THEN result := 'debit_account_not_open';
      ELSIF acc_status[c] <> 'open' THEN result := 'credit_account_not_open';
      ELSIF acc_debits_limited[d] AND acc_dp[d] + acc_dpo[d] + amount > acc_cpo[d] THEN result := 'exceeds_credits';
      ELSIF acc_credits_limited[c] AND acc_cp[c] + acc_cpo[c] + amount > acc_dpo[c] THEN result := 'exceeds_debits';
      ELSE
        IF p_phases[i] = 'single' THEN
          acc_dpo[d] := acc_dpo[d] + amount;
          acc_cpo[c] := acc_cpo[c] + amount;
        ELSE
          acc_dp[d] := acc_dp[d] + amount;
          acc_cp[c] := acc_cp[c] + amount;
          p := COALESCE(array_length(pen_id, 1), 0) + 1;
          pen_id[p] := p_ids[i]; pen_debit[p] := p_debit_ids[i]; pen_credit[p] := p_credit_ids[i]; pen_amount[p] := amount;
          pen_currency[p] := p_currencies[i]; pen_status[p] := 'pending'; pen_timed_out[p] := false; pen_is_new[p] := true;
          pen_timeout_at[p] := CASE WHEN p_timeouts_s[i] IS NULL THEN NULL ELSE now() + make_interval(secs => p_timeouts_s[i]) END;
          pen_resolved_by[p] := NULL; pen_changed[p] := true;
        END IF;
        result := 'ok';
      END IF;
    ELSE
      -- post or void of a pending transfer
      p := array_position(pen_id, p_pending_ids[i]);
      IF p IS NULL THEN
        result := CASE WHEN p_pending_ids[i] = ANY (out_id[1:out_count])
                         OR array_position(known_id, p_pending_ids[i]) IS NOT NULL
                         OR EXISTS (SELECT 1 FROM ledger_transfers WHERE id = p_pending_ids[i])
                       THEN 'pending_transfer_not_pending' ELSE 'pending_transfer_not_found' END;
      ELSIF pen_status[p] = 'posted' THEN result := 'pending_transfer_already_posted';
      ELSIF pen_status[p] = 'voided' THEN result := 'pending_transfer_already_voided';
      ELSIF pen_status[p] = 'expired' THEN result := 'pending_transfer_expired';
      ELSIF (p_debit_ids[i] IS NOT NULL AND p_debit_ids[i] <> pen_debit[p]) OR (p_credit_ids[i] IS NOT NULL AND p_credit_ids[i] <> pen_credit[p]) THEN
        result := 'pending_transfer_has_different_accounts';
      ELSIF p_currencies[i] IS NOT NULL AND p_currencies[i] <> pen_currency[p] THEN result := 'pending_transfer_has_different_currency';
      ELSIF p_phases[i] = 'post' AND pen_timed_out[p] THEN result := 'pending_transfer_expired'; -- past its timeout it can only be voided
      ELSIF p_phases[i] = 'post' AND COALESCE(p_amounts[i], pen_amount[p]) > pen_amount[p] THEN result := 'exceeds_pending_transfer_amount';
      ELSIF p_phases[i] = 'void' AND COALESCE(p_amounts[i], pen_amount[p]) <> pen_amount[p] THEN result := 'pending_transfer_has_different_amount';
      ELSE
        amount := COALESCE(p_amounts[i], pen_amount[p]);
        d := array_position(acc_id, pen_debit[p]);
        c := array_position(acc_id, pen_credit[p]);
        -- The whole reservation is released; for a post, `amount` of it (all or part) is posted.
        acc_dp[d] := acc_dp[d] - pen_amount[p];
        acc_cp[c] := acc_cp[c] - pen_amount[p];
        IF p_phases[i] = 'post' THEN
          acc_dpo[d] := acc_dpo[d] + amount;
          acc_cpo[c] := acc_cpo[c] + amount;
        END IF;
        pen_status[p] := CASE WHEN p_phases[i] = 'post' THEN 'posted' WHEN pen_timed_out[p] THEN 'expired' ELSE 'voided' END;
        pen_resolved_by[p] := p_ids[i];
        pen_changed[p] := true;
        result := 'ok';
      END IF;
    END IF;

    -- Without the look-up, a refused transfer might be a retry of a stored one, which must be
    -- answered `exists…` instead: if it is stored, start again with the look-up.
    IF result <> 'ok' AND NOT p_look_up_existing AND EXISTS (SELECT 1 FROM ledger_transfers WHERE id = p_ids[i]) THEN
      RAISE unique_violation USING MESSAGE = 'ledger: batch holds a stored transfer id';
    END IF;
    results[i] := result;
    IF result NOT IN ('ok', 'exists') AND chain_start IS NOT NULL THEN
      -- Undo the chain in memory (nothing has been written yet) and fail all of it.
      acc_dp := saved_dp; acc_dpo := saved_dpo; acc_cp := saved_cp; acc_cpo := saved_cpo; acc_changed := saved_acc_changed;
      pen_id := pen_id[1:saved_pen_count]; pen_debit := pen_debit[1:saved_pen_count]; pen_credit := pen_credit[1:saved_pen_count];
      pen_amount := pen_amount[1:saved_pen_count]; pen_currency := pen_currency[1:saved_pen_count]; pen_timed_out := pen_timed_out[1:saved_pen_count];
      pen_timeout_at := pen_timeout_at[1:saved_pen_count]; pen_is_new := pen_is_new[1:saved_pen_count];
      pen_status := saved_pen_status[1:saved_pen_count]; pen_resolved_by := saved_pen_resolved_by[1:saved_pen_count];
      pen_changed := saved_pen_changed[1:saved_pen_count];
      known_id := known_id[1:saved_known_count]; known_debit := known_debit[1:saved_known_count]; known_credit := known_credit[1:saved_known_count];
      known_amount := known_amount[1:saved_known_count]; known_currency := known_currency[1:saved_known_count];
      known_phase := known_phase[1:saved_known_count]; known_pending := known_pending[1:saved_known_count]; known_code := known_code[1:saved_known_count];
      known_source_type := known_source_type[1:saved_known_count]; known_source_id := known_source_id[1:saved_known_count];
      known_timeout_s := known_timeout_s[1:saved_known_count]; known_pending_amount := known_pending_amount[1:saved_known_count];
      out_count := saved_out_count;
      chain_end := i;
      WHILE chain_end < transfer_count AND COALESCE(p_linked[chain_end], false) LOOP chain_end := chain_end + 1; END LOOP;
      FOR j IN chain_start .. chain_end LOOP results[j] := 'linked_event_failed'; END LOOP;
      results[i] := result;
      chain_start := NULL;
      i := chain_end + 1;
      CONTINUE;
    END IF;
    IF chain_start IS NOT NULL AND NOT COALESCE(p_linked[i], false) THEN chain_start := NULL; END IF; -- the chain is complete
    IF result <> 'ok' THEN i := i + 1; CONTINUE; END IF;

    acc_changed[d] := true;
    acc_changed[c] := true;
    out_count := out_count + 1;
    out_id[out_count] := p_ids[i];
    out_debit[out_count] := acc_id[d];
    out_credit[out_count] := acc_id[c];
    out_amount[out_count] := amount;
    out_currency[out_count] := acc_currency[d];
    out_phase[out_count] := p_phases[i];
    out_pending[out_count] := p_pending_ids[i];
    out_code[out_count] := p_codes[i];
    out_source_type[out_count] := p_source_types[i];
    out_source_id[out_count] := p_source_ids[i];
    out_debit_booked[out_count] := acc_cpo[d] - acc_dpo[d];
    out_debit_available[out_count] := acc_cpo[d] - acc_dpo[d] - acc_dp[d];
    out_credit_booked[out_count] := acc_cpo[c] - acc_dpo[c];
    out_credit_available[out_count] := acc_cpo[c] - acc_dpo[c] - acc_dp[c];
    -- A later transfer of the batch with the same id is a retry of this one.
    IF track_known THEN
      k := COALESCE(array_length(known_id, 1), 0) + 1;
      known_id[k] := p_ids[i]; known_debit[k] := acc_id[d]; known_credit[k] := acc_id[c]; known_amount[k] := amount;
      known_currency[k] := acc_currency[d]; known_phase[k] := p_phases[i]; known_pending[k] := p_pending_ids[i]; known_code[k] := p_codes[i];
      known_source_type[k] := p_source_types[i]; known_source_id[k] := p_source_ids[i]; known_timeout_s[k] := p_timeouts_s[i];
      known_pending_amount[k] := CASE WHEN p_pending_ids[i] IS NULL THEN NULL ELSE pen_amount[p] END;
    END IF;
    i := i + 1;
  END LOOP;

  IF out_count = 0 THEN RETURN results; END IF;

  -- 5. Write: each changed account once, all new transfers, new and resolved pending states.
  UPDATE ledger_accounts a
     SET debits_pending = u.dp, debits_posted = u.dpo, credits_pending = u.cp, credits_posted = u.cpo
    FROM unnest(acc_id, acc_dp, acc_dpo, acc_cp, acc_cpo, acc_changed) AS u(id, dp, dpo, cp, cpo, changed)
   WHERE a.id = u.id AND u.changed;

  INSERT INTO ledger_transfers (id, debit_account_id, credit_account_id, amount_kobo, currency, phase, pending_id, code, source_type, source_id,
                                debit_booked_after, debit_available_after, credit_booked_after, credit_available_after)
  SELECT * FROM unnest(out_id[1:out_count], out_debit[1:out_count], out_credit[1:out_count], out_amount[1:out_count], out_currency[1:out_count],
                       out_phase[1:out_count], out_pending[1:out_count], out_code[1:out_count], out_source_type[1:out_count], out_source_id[1:out_count],
                       out_debit_booked[1:out_count], out_debit_available[1:out_count], out_credit_booked[1:out_count], out_credit_available[1:out_count]);

  IF array_length(pen_id, 1) IS NULL THEN RETURN results; END IF;

  INSERT INTO ledger_pending_transfers (transfer_id, status, timeout_at, resolved_by, resolved_at)
  SELECT id, status, timeout_at, resolved_by, CASE WHEN resolved_by IS NULL THEN NULL ELSE now() END
    FROM unnest(pen_id, pen_status, pen_timeout_at, pen_resolved_by, pen_is_new) AS n(id, status, timeout_at, resolved_by, is_new)
   WHERE n.is_new;

  UPDATE ledger_pending_transfers s
     SET status = u.status, resolved_by = u.resolved_by, resolved_at = now()
    FROM unnest(pen_id, pen_status, pen_resolved_by, pen_is_new, pen_changed) AS u(id, status, resolved_by, is_new, changed)
   WHERE s.transfer_id = u.id AND u.changed AND NOT u.is_new;

  RETURN results;
END
$$;
