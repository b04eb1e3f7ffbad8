-- The database guards the ledger's invariants itself, not only the one function that writes it.
--
-- 1. Balanced sums. Every statement that changes account totals must change the debits and the
--    credits of each currency by the same amount, posted and pending alike, so that
--    Σ debits_posted = Σ credits_posted and Σ debits_pending = Σ credits_pending hold after every
--    statement, whoever wrote it. ledger_apply_batch writes all the accounts of a batch in one
--    UPDATE, so its statements balance by construction; a one-sided hand-written UPDATE is refused.
-- 2. An account's fixed facts stay fixed: partner, currency, kind and flags never change once it
--    exists, it starts at zero, closed is for good, and accounts are never deleted (they close).
--
-- The account's value rules (currency format, kind, status, one flag) move from CHECK constraints
-- into the trigger that guards the fixed facts. A CHECK constraint is parsed from its stored text
-- and compiled again by every statement that writes the table, so each ledger call's balance
-- UPDATE paid for all ten of them; the trigger fires only when those columns are written. The
-- balance constraints (totals never negative, the flags' limits) stay CHECK constraints, checked
-- in the very statement that writes new totals.

ALTER TABLE ledger_accounts
  DROP CONSTRAINT ledger_accounts_currency_check,
  DROP CONSTRAINT ledger_accounts_kind_check,
  DROP CONSTRAINT ledger_accounts_status_check,
  DROP CONSTRAINT ledger_accounts_one_flag;

CREATE FUNCTION ledger_accounts_guard_facts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.currency !~ '^[A-Z]{3}$' THEN
    RAISE EXCEPTION 'ledger account %: currency % is not an ISO 4217 code', NEW.id, NEW.currency USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.kind NOT IN ('wallet', 'float', 'collections', 'escrow_holding', 'provider_settlement', 'suspense', 'payable', 'fees', 'bench') THEN
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

-- Fires when a fixed fact is written, never for the balance UPDATE (which sets only the totals).
CREATE TRIGGER ledger_accounts_guard_facts
  BEFORE INSERT OR UPDATE OF id, partner_id, currency, kind, status, debits_must_not_exceed_credits, credits_must_not_exceed_debits
  ON ledger_accounts FOR EACH ROW EXECUTE FUNCTION ledger_accounts_guard_facts();

CREATE FUNCTION ledger_accounts_stay_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  unbalanced text;
BEGIN
  -- Currency cannot change (ledger_accounts_guard_facts), so old and new rows share it.
  SELECT n.currency INTO unbalanced
    FROM ledger_accounts_after n JOIN ledger_accounts_before o ON o.id = n.id
   GROUP BY n.currency
  HAVING sum(n.debits_posted - o.debits_posted) <> sum(n.credits_posted - o.credits_posted)
      OR sum(n.debits_pending - o.debits_pending) <> sum(n.credits_pending - o.credits_pending)
   LIMIT 1;
  IF unbalanced IS NOT NULL THEN
    RAISE EXCEPTION 'ledger: a statement changed the % debits and credits by different amounts', unbalanced
      USING ERRCODE = 'check_violation', HINT = 'account totals change only through ledger_create_transfers()';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER ledger_accounts_stay_balanced AFTER UPDATE ON ledger_accounts
  REFERENCING OLD TABLE AS ledger_accounts_before NEW TABLE AS ledger_accounts_after
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_accounts_stay_balanced();

-- One function refuses what a ledger table never allows, saying why (the trigger's argument): the
-- append-only guard of ledger_transfers moves onto it, and accounts are never deleted.
CREATE FUNCTION ledger_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% (% refused)', TG_ARGV[0], TG_OP USING ERRCODE = 'restrict_violation';
END
$$;

DROP TRIGGER ledger_transfers_append_only ON ledger_transfers;
DROP FUNCTION ledger_transfers_are_append_only();
CREATE TRIGGER ledger_transfers_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_transfers
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse('ledger_transfers is append-only');

CREATE TRIGGER ledger_accounts_never_deleted BEFORE DELETE OR TRUNCATE ON ledger_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse('ledger accounts are never deleted, only closed');
