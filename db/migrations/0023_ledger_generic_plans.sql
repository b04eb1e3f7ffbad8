-- The statements inside the ledger's batch function are planned once and reused (generic plans),
-- not planned again on every call. Left to itself, PostgreSQL's plan cache compares a generic plan
-- with plans made for each call's own arrays, and for `id = ANY (array)` and `unnest(array)` it
-- keeps re-planning: each call paid for planning its lock, update and insert statements
-- (docs/performance.md). Every statement in the function reaches its rows by primary key, so one
-- plan fits every batch size: an index scan, or a nested loop over the batch's arrays into one.
ALTER FUNCTION ledger_apply_batch(uuid[], uuid[], uuid[], bigint[], text[], text[], uuid[], text[], integer[], text[], text[], boolean[], boolean)
  SET plan_cache_mode = force_generic_plan;
