-- The sandbox bank's transfer on its own books (book, credit, debit, interbank) in one round trip:
-- the statements src/sandbox-bank/transfers.ts sent one by one inside BEGIN … COMMIT (lock the
-- customer accounts, move the money, record the transfer) run here, called in autocommit, so the
-- call is its own transaction. Six round trips per transfer become one (docs/performance.md).
--
-- The rules are those of the statements it replaces:
-- - Customer accounts are locked in account-number order; the settlement pool is the bank's own
--   side, never checked, locked or booked.
-- - The credited customer's room under p_balance_max is judged by the UPDATE, a later statement
--   than the lock (a volatile function takes a new snapshot per statement under READ COMMITTED), so
--   it sees every transfer in progress from that account; summed in numeric, never overflowing.
-- - A reference is used once: a second transfer under it fails on the unique reference
--   (transfers_reference_key), and everything the call moved rolls back with it; the caller
--   answers 26 (duplicate).
-- - A refusal decided before the books (a magic amount, a bad interbank destination) comes as
--   p_refusal: nothing moves, and the transfer is recorded with that code.
-- - An accepted transfer held in progress (p_hold: interbank, or the magic "pending, then
--   success" amount) answers 09 and records its final code and moment; others record neither.
CREATE FUNCTION sandbox_bank.transfer_on_books(
  p_institution text, p_reference text, p_kind text, p_debit text, p_credit text, p_settlement text, p_amount bigint, p_narration text,
  p_refusal text, p_hold boolean, p_final_code text, p_destination_bank_code text, p_destination_account_number text, p_settles_at timestamptz,
  p_balance_max numeric
) RETURNS TABLE (session_id text, response_code text) LANGUAGE plpgsql AS $$
DECLARE
  code text := p_refusal;
  debit_found boolean;
  credit_found boolean;
  any_dormant boolean;
  debit_covers boolean;
  customers integer := (CASE WHEN p_debit = p_settlement THEN 0 ELSE 1 END) + (CASE WHEN p_credit = p_settlement THEN 0 ELSE 1 END);
  moved integer;
  in_progress boolean;
  new_session text;
BEGIN
  IF code IS NULL AND p_debit = p_credit THEN
    code := '12';
  ELSIF code IS NULL THEN
    SELECT coalesce(bool_or(a.account_number = p_debit), false), coalesce(bool_or(a.account_number = p_credit), false),
           coalesce(bool_or(a.status = 'dormant'), false), coalesce(bool_or(a.account_number = p_debit AND a.balance_kobo >= p_amount), false)
      INTO debit_found, credit_found, any_dormant, debit_covers
      FROM (SELECT l.account_number, l.status, l.balance_kobo FROM sandbox_bank.accounts l
             WHERE l.account_number IN (p_debit, p_credit) AND l.kind <> 'settlement'
             ORDER BY l.account_number FOR UPDATE) a;
    IF (p_debit <> p_settlement AND NOT debit_found) OR (p_credit <> p_settlement AND NOT credit_found) THEN
      code := '07';
    ELSIF any_dormant THEN
      code := '06';
    ELSIF p_debit <> p_settlement AND NOT debit_covers THEN
      code := '51';
    ELSE
      UPDATE sandbox_bank.accounts SET balance_kobo = balance_kobo + CASE WHEN account_number = p_debit THEN -p_amount ELSE p_amount END
       WHERE account_number IN (p_debit, p_credit) AND kind <> 'settlement'
         AND (SELECT c.balance_kobo + p_amount::numeric + coalesce((SELECT sum(t.amount_kobo) FROM sandbox_bank.transfers t
                                                                 WHERE t.debit_account_number = c.account_number AND t.kind = 'interbank' AND t.response_code = '09'), 0)
                <= p_balance_max
                FROM sandbox_bank.accounts c WHERE c.account_number = p_credit AND c.kind <> 'settlement') IS NOT FALSE;
      GET DIAGNOSTICS moved = ROW_COUNT;
      code := CASE WHEN moved = customers THEN '00' ELSE '61' END;
    END IF;
  END IF;
  in_progress := code = '00' AND p_hold;
  IF in_progress THEN
    code := '09';
  END IF;
  -- Refused transfers are recorded too: the reference is spent, and a requery says why. The
  -- session id is the NIP session id made as src/sandbox-bank/transfers.ts makes it.
  INSERT INTO sandbox_bank.transfers (session_id, reference, kind, debit_account_number, credit_account_number, amount_kobo, narration, response_code,
                                      destination_bank_code, destination_account_number, settles_at, final_code)
  VALUES (p_institution || to_char(now() AT TIME ZONE 'UTC', 'YYMMDDHH24MISS') || lpad(nextval('sandbox_bank.session_sequence')::text, 12, '0'),
          p_reference, p_kind, p_debit, p_credit, p_amount, p_narration, code,
          p_destination_bank_code, p_destination_account_number,
          CASE WHEN in_progress THEN p_settles_at END, CASE WHEN in_progress THEN p_final_code END)
  RETURNING transfers.session_id INTO new_session;
  RETURN QUERY SELECT new_session, code;
END
$$;
