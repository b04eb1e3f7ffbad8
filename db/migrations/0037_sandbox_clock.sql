-- Sandbox test clocks (docs/sandbox.md): a sandbox partner's time is the real time plus an offset
-- the partner moves forward (POST /api/v1/rail/sandbox/clock/advance), so that expiry, requery
-- deadlines and settlement cut-offs can be exercised in seconds. No row: the offset is 0 (every
-- live partner, and a sandbox partner that never advanced its clock).
CREATE TABLE sandbox_clocks (
  partner_id uuid PRIMARY KEY REFERENCES partners (id),
  -- Only ever grows (time never moves backwards); bounded to 100 years so dates stay representable.
  offset_seconds bigint NOT NULL CHECK (offset_seconds >= 0 AND offset_seconds <= 3155760000),
  advanced_at timestamptz NOT NULL
);

-- A partner's time at a moment of the real clock (the application passes its clock's time: the
-- database's own now() decides nothing). Sweeps compare a row's deadline with this.
CREATE FUNCTION partner_now(partner uuid, at timestamptz) RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT at + make_interval(secs => coalesce((SELECT c.offset_seconds FROM sandbox_clocks c WHERE c.partner_id = partner), 0))
$$;
