-- A value sealed with the master key of the first process that started on this database. Every
-- later process, and every command that seals a secret, must open it: a process given another key
-- (a key file a host made for itself, a mistyped RAIL_MASTER_KEY) is refused at start instead of
-- sealing secrets nobody else can open. One row at most.
CREATE TABLE master_key_check (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  sealed bytea NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
