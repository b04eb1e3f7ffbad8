-- Partner dashboard sign-in (docs/dashboard.md). Only SHA-256 hashes of sign-in tokens and session
-- ids are stored: a copy of these tables signs nobody in.
CREATE TABLE dashboard_links (
  token_hash text PRIMARY KEY CHECK (length(token_hash) = 64),
  partner_id uuid NOT NULL REFERENCES partners(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

CREATE TABLE dashboard_sessions (
  id_hash text PRIMARY KEY CHECK (length(id_hash) = 64),
  partner_id uuid NOT NULL REFERENCES partners(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  ended_at timestamptz
);
CREATE INDEX dashboard_sessions_partner ON dashboard_sessions (partner_id);

-- What was done from the dashboard, and by whom: the session's partner, actor 'dashboard'. The
-- services it calls keep no audit of their own.
CREATE TABLE dashboard_actions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners(id),
  actor text NOT NULL DEFAULT 'dashboard' CHECK (actor = 'dashboard'),
  action text NOT NULL CHECK (length(action) <= 64),
  object_id uuid NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_actions_partner ON dashboard_actions (partner_id, created_at);
