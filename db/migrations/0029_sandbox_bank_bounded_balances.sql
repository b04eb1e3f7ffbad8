-- No client of the sandbox bank can break another's transfers by volume (issue: one credit of
-- 2^53 − 1 kobo took the shared settlement pool past JavaScript's safe integers, and every later
-- credit, debit and send of every client failed).
--
-- 1. The settlement pool is the bank's own side of every client's transfers: never checked, so no
--    longer booked as a running balance (its position is the sum of its transfers). A pool damaged
--    before this migration is reset, and the database keeps it at zero.
-- 2. A customer account holds at most 2^53 − 1 kobo (the bank refuses a credit past it with NIP 61,
--    counting its transfers in progress, which may come back), so every balance is exact in
--    JavaScript. The database guards the same bound.
-- 3. Those transfers in progress are found by a small partial index: rows enter it when sent and
--    leave it when they settle.
UPDATE sandbox_bank.accounts SET balance_kobo = 0 WHERE kind = 'settlement';

ALTER TABLE sandbox_bank.accounts
  ADD CONSTRAINT accounts_settlement_not_booked CHECK (kind <> 'settlement' OR balance_kobo = 0),
  -- NOT VALID: a sandbox account already past the bound (possible before this migration) must not
  -- stop the migration; every write from now on is checked.
  ADD CONSTRAINT accounts_balance_within_safe_integers CHECK (balance_kobo <= 9007199254740991) NOT VALID;

CREATE INDEX transfers_in_progress_by_debit_account ON sandbox_bank.transfers (debit_account_number)
  WHERE kind = 'interbank' AND response_code = '09';
