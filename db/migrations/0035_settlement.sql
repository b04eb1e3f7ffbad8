-- Settlement of collections (docs/settlement.md). Collected money settles to the partner's float
-- after each credit (mode 'float', the default: a ledger line, no table row), or to a registered
-- bank account once per daily cycle (mode 'bank': one payout of the payment pipeline per cycle).

-- A partner's settlement configuration. No row: mode 'float'.
CREATE TABLE settlement_settings (
  partner_id uuid PRIMARY KEY REFERENCES partners (id),
  mode text NOT NULL DEFAULT 'float' CHECK (mode IN ('float', 'bank')),
  -- The registered settlement account (NUBAN-validated, name-checked at registration).
  bank_code text,
  account_number text,
  account_name text,
  verified_account_name text,
  -- The daily cut-off, local time in Africa/Lagos (UTC+1, no daylight saving), 'HH:MM'.
  cutoff_time text NOT NULL DEFAULT '17:00' CHECK (cutoff_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  -- Cycles whose cut-off falls before bank mode was chosen are not paid.
  bank_since timestamptz,
  -- Signed changes (PUT is ordered by signed time: src/platform/signed-requests.ts).
  changes_signed_at_s bigint,
  changes_body_hashes text[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (mode = 'float' OR (bank_code IS NOT NULL AND account_number IS NOT NULL AND account_name IS NOT NULL AND bank_since IS NOT NULL))
);

-- One settlement per partner, currency and cycle: the unique key is what makes a cycle paid once,
-- whatever number of workers or reruns reach it.
CREATE TABLE settlements (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  currency text NOT NULL,
  -- The cycle: the Africa/Lagos date of its cut-off ('2026-11-25'), or 'sandbox-…' for a run on request.
  cycle text NOT NULL,
  cutoff_at timestamptz NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'paid', 'failed')),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0),
  credits_total_kobo bigint NOT NULL,
  credit_count integer NOT NULL,
  bank_code text NOT NULL,
  account_number text NOT NULL,
  account_name text NOT NULL,
  outbound_transfer_id uuid,
  failure_reason jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  state_changed_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (partner_id, currency, cycle)
);
CREATE INDEX settlements_partner ON settlements (partner_id, id DESC);

-- Bank mode: credits whose money stays in collections, waiting for a cycle. settlement_id is the
-- settlement paying them now; a failed settlement gives them back (NULL) for the next cycle.
CREATE TABLE settlement_queue (
  credit_id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  currency text NOT NULL,
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0),
  collected_at timestamptz NOT NULL DEFAULT now(),
  settlement_id uuid REFERENCES settlements (id)
);
CREATE INDEX settlement_queue_waiting ON settlement_queue (partner_id, currency, collected_at) WHERE settlement_id IS NULL;

-- A settlement's report: the credits it included, as they were when the cycle ran (kept when it fails).
CREATE TABLE settlement_credits (
  settlement_id uuid NOT NULL REFERENCES settlements (id),
  credit_id uuid NOT NULL,
  amount_kobo bigint NOT NULL,
  collected_at timestamptz NOT NULL,
  PRIMARY KEY (settlement_id, credit_id)
);
