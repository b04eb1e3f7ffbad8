-- The worker processes alive now, and the graphile-worker ids each runs jobs under. A process
-- killed without stopping leaves the jobs it had claimed locked under those ids, and
-- graphile-worker frees such jobs only after four hours. Each process renews seen_at while it
-- lives; the sweep takes one silent for a minute as dead and unlocks its jobs at once.
CREATE TABLE worker_processes (
  process_id uuid PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  worker_ids text[] NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz NOT NULL DEFAULT now()
);
