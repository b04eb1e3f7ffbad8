-- Whether the bank ever had an instruction: when it first answered that it had the payment (in
-- progress, or done). "No record" (25) on an instruction it never had means the sends may not
-- have reached it, and the pipeline sends again under the same reference (bounded), even once the
-- instruction is `unknown`; on one it had, 25 proves nothing. Null: no such answer yet.
ALTER TABLE bank_instructions ADD COLUMN accepted_at timestamptz;

-- Rows from before this column: those the bank answered for are marked accepted; `unknown` ones
-- too, since whether the bank had them is not known, and the old rule (25 proves nothing) is the
-- safe one for them.
UPDATE bank_instructions SET accepted_at = state_changed_at WHERE state IN ('sent', 'succeeded', 'unknown');
