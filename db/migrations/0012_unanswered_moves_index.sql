-- Moves still waiting for their first answer: the sweep that finds a move left pending by a
-- process that died mid-call reads this index (a few rows: only moves in flight), instead of a
-- job enqueued with every claim.
CREATE INDEX wallet_moves_unanswered ON wallet_moves (created_at) WHERE status = 'pending' AND response_code IS NULL AND requery_attempts = 0;
