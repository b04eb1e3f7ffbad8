-- The production ledger loses what only benchmarks and a removed code path used (issue 33):
--
-- 1. The `bench` account kind. Benchmarks made their accounts with it; they now make `wallet`
--    accounts, and the ledger knows only the kinds Rail's features open (src/ledger/types.ts).
--    Accounts already of kind bench (a benchmark's throw-away database) keep it: the guard judges
--    a row when it is written, and a kind never changes.
-- 2. ledger_create_transfer_or_raise() (migration 0013): one transfer inside a business statement,
--    refusing by raising. Nothing calls it any more; every transfer goes through
--    ledger_create_transfers() from src/ledger/service.ts.
CREATE OR REPLACE FUNCTION ledger_accounts_guard_facts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.currency !~ '^[A-Z]{3}$' THEN
    RAISE EXCEPTION 'ledger account %: currency % is not an ISO 4217 code', NEW.id, NEW.currency USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.kind NOT IN ('wallet', 'float', 'collections', 'escrow_holding', 'provider_settlement', 'suspense', 'payable', 'fees') THEN
    RAISE EXCEPTION 'ledger account %: unknown kind %', NEW.id, NEW.kind USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.status NOT IN ('open', 'frozen', 'closed') THEN
    RAISE EXCEPTION 'ledger account %: unknown status %', NEW.id, NEW.status USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.debits_must_not_exceed_credits AND NEW.credits_must_not_exceed_debits THEN
    RAISE EXCEPTION 'ledger account %: at most one balance flag', NEW.id USING ERRCODE = 'check_violation';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.debits_pending <> 0 OR NEW.debits_posted <> 0 OR NEW.credits_pending <> 0 OR NEW.credits_posted <> 0 THEN
      RAISE EXCEPTION 'ledger account %: a new account starts at zero (money arrives by transfer)', NEW.id USING ERRCODE = 'check_violation';
    END IF;
  ELSE
    IF (NEW.id, NEW.partner_id, NEW.currency, NEW.kind, NEW.debits_must_not_exceed_credits, NEW.credits_must_not_exceed_debits)
       IS DISTINCT FROM (OLD.id, OLD.partner_id, OLD.currency, OLD.kind, OLD.debits_must_not_exceed_credits, OLD.credits_must_not_exceed_debits) THEN
      RAISE EXCEPTION 'ledger account %: partner, currency, kind and flags never change', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    IF OLD.status = 'closed' AND NEW.status <> 'closed' THEN
      RAISE EXCEPTION 'ledger account %: closed is for good', OLD.id USING ERRCODE = 'check_violation';
    END IF;
  END IF;
  RETURN NEW;
END
$$;

DROP FUNCTION ledger_create_transfer_or_raise(uuid, uuid, uuid, bigint, text, text, uuid, text, integer, text, text);
