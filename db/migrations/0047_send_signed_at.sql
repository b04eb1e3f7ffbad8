-- A send is signed with the time its attempt was committed (last_signed_at), by the clock Rail
-- shares with the bank, and a sandbox partner's clock never moves it (last_sent_at moves with that
-- clock; the bank's window does not). A provider with a request validity window refuses any send
-- of it once that window has run from this time, so "no record" proves the instruction was never
-- received only when asked after that moment (docs/decisions/0008-payment-pipeline.md). Null on
-- instructions sent before this column: their sends were signed when called, and "no record" of
-- them fails nothing.
ALTER TABLE bank_instructions ADD COLUMN last_signed_at timestamptz;

-- Unknown instructions are asked again on a slow schedule (hourly, then daily): the sweep finds
-- those due through this index.
CREATE INDEX bank_instructions_unknown_due ON bank_instructions (next_attempt_at) WHERE state = 'unknown';
