-- The sandbox bank opens a customer's account once per opening reference: Rail gives one derived
-- from the partner and the customer reference, so that a retried or concurrent wallet creation —
-- or one whose answer was lost — gets the account opened before, never a second one. Accounts
-- opened without a reference (tests opening accounts directly) have none.
ALTER TABLE sandbox_bank.accounts
  ADD COLUMN opening_reference text CONSTRAINT accounts_opening_reference_length CHECK (length(opening_reference) BETWEEN 1 AND 64),
  ADD CONSTRAINT accounts_one_per_opening_reference UNIQUE (opening_reference);
