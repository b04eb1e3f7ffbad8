-- Balances and statements (issue 18, items 4 and 5), read from the ledger: a statement line is a
-- transfer that changed an account's booked balance (phase single or post), and its running
-- balance is the `*_booked_after` the ledger stored on it. A page newest first is a range scan of
-- ledger_transfers_by_debit_account / _by_credit_account (account, sequence); nothing new for that.

-- A `from`/`to` range is turned into the account's sequence bounds: the first line posted at or
-- after `from`, the last posted before `to`. One probe each here, instead of a scan of every line
-- newer than the range. Partial: holds (pending) and voids are never lines.
CREATE INDEX ledger_transfers_debit_lines_by_time ON ledger_transfers (debit_account_id, created_at, sequence) WHERE phase IN ('single', 'post');
CREATE INDEX ledger_transfers_credit_lines_by_time ON ledger_transfers (credit_account_id, created_at, sequence) WHERE phase IN ('single', 'post');

-- The partner's payouts not yet final, for GET /api/v1/rail/balances: a few rows per partner at
-- any time, where outbound_transfers_by_partner would read every payout the partner ever made.
CREATE INDEX outbound_transfers_in_flight ON outbound_transfers (partner_id) WHERE state IN ('pending', 'submitted', 'unknown');
