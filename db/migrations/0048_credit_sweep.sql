-- Money at the bank that Rail never saw (issue 31, the fault campaign): a credit whose notice was
-- lost is found by a scheduled sweep that asks the provider for the credits of every account that
-- can receive money, a batch of accounts a run (src/inbound-credits/account-sweep.ts).
--
-- How Rail learned of a credit, kept with it and told to the partner in its event (`foundBy`,
-- docs/webhooks.md): the provider's notice, the partner's requery, or the sweep. A credit is
-- stored once per session id, so whichever finds it first names it.
ALTER TABLE inbound_credits ADD COLUMN found_by text NOT NULL DEFAULT 'notice' CHECK (found_by IN ('notice', 'requery', 'sweep'));

-- The sweep's place: one row. A pass walks every receiving account in (provider, account number)
-- order, `after_*` the last one swept; each account is asked for its credits since `since`, the
-- start of the last pass that swept every account without a failure (null: everything the
-- provider lists). `pass_started_at` is when the pass under way began; `pass_failures` how many of
-- its accounts the provider did not answer for (a pass with failures leaves `since` where it was,
-- so the next pass asks for those credits again).
CREATE TABLE inbound_credit_sweep (
  id smallint PRIMARY KEY CHECK (id = 1),
  after_provider text,
  after_account_number text,
  since timestamptz,
  pass_started_at timestamptz,
  pass_failures integer NOT NULL DEFAULT 0 CHECK (pass_failures >= 0),
  CHECK ((after_provider IS NULL) = (after_account_number IS NULL))
);
INSERT INTO inbound_credit_sweep (id) VALUES (1);
