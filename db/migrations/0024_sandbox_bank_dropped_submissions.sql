-- The sandbox bank's magic amount ending 9097 models a lost request: the first submission of a
-- reference is dropped unprocessed, and the bank remembers which references it dropped (for every
-- process serving it, across restarts) so that a resend is processed normally.
CREATE TABLE sandbox_bank.dropped_submissions (
  reference text PRIMARY KEY,
  dropped_at timestamptz NOT NULL DEFAULT now()
);
