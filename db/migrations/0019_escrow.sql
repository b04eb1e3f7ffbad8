-- Escrow (docs/contracts/escrow.md): a partner's escrow, funded by credits into its holding account, released to
-- the recipient or refunded to the payer; and the partner's registered escrow webhook.

CREATE TABLE escrows (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  -- The partner-facing identifier, EPT-<unix ms>-<base62>.
  ref text NOT NULL CHECK (ref ~ '^EPT-[0-9]+-[A-Za-z0-9]+$'),
  -- The partner's optional idempotency reference; unique per partner for good.
  reference text CHECK (length(reference) BETWEEN 1 AND 64),
  -- Hash of the create request, so that the same reference with another body is a conflict (409).
  request_hash text NOT NULL,
  type text NOT NULL CHECK (type IN ('goods', 'services', 'property', 'conditional')),
  -- initiated: awaiting funding; funded: held; released: paid to the recipient payable;
  -- cancelled: refunded to the payer payable; expired: the TTL elapsed before funding (refunded).
  status text NOT NULL CHECK (status IN ('initiated', 'funded', 'released', 'cancelled', 'expired')),
  amount_kobo bigint NOT NULL CHECK (amount_kobo >= 10000 AND amount_kobo <= 9007199254740991),
  -- Credits moved into the escrow holding account for this escrow so far.
  funded_amount_kobo bigint NOT NULL DEFAULT 0 CHECK (funded_amount_kobo >= 0 AND funded_amount_kobo <= 9007199254740991),
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  description text NOT NULL CHECK (length(description) BETWEEN 1 AND 255),
  payer_email text NOT NULL CHECK (length(payer_email) <= 254),
  recipient_email text NOT NULL CHECK (length(recipient_email) <= 254),
  metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
  -- Overrides the registered escrow webhook for this escrow's events.
  webhook_url text CHECK (length(webhook_url) <= 2048),
  -- The payment intent whose virtual account funds the escrow (collections wires it).
  funding_payment_intent_id uuid,
  -- Made when money first moves to them: what is owed to the recipient, and back to the payer.
  recipient_payable_account_id uuid REFERENCES ledger_accounts (id),
  payer_refund_account_id uuid REFERENCES ledger_accounts (id),
  release_reason text CHECK (length(release_reason) <= 500),
  cancel_reason text CHECK (length(cancel_reason) <= 500),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  funded_at timestamptz,
  released_at timestamptz,
  cancelled_at timestamptz,
  expired_at timestamptz,
  CONSTRAINT escrows_ref_unique UNIQUE (ref),
  CONSTRAINT escrows_released_when_released CHECK ((status = 'released') = (released_at IS NOT NULL)),
  CONSTRAINT escrows_cancelled_when_cancelled CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
  CONSTRAINT escrows_expired_when_expired CHECK ((status = 'expired') = (expired_at IS NOT NULL)),
  CONSTRAINT escrows_funded_in_full CHECK (status NOT IN ('funded', 'released') OR (funded_at IS NOT NULL AND funded_amount_kobo >= amount_kobo)),
  CONSTRAINT escrows_expired_unfunded CHECK (status <> 'expired' OR funded_at IS NULL)
);

CREATE UNIQUE INDEX escrows_one_per_reference ON escrows (partner_id, reference) WHERE reference IS NOT NULL;
CREATE INDEX escrows_by_partner ON escrows (partner_id, id DESC);
-- The expiry sweep reads only escrows still awaiting funding.
CREATE INDEX escrows_due_to_expire ON escrows (expires_at) WHERE status = 'initiated';

-- One registered escrow webhook per partner (POST /api/v1/escrow/partner/webhook).
CREATE TABLE escrow_webhooks (
  partner_id uuid PRIMARY KEY REFERENCES partners (id),
  url text NOT NULL CHECK (length(url) <= 2048),
  -- The webhookSecret sealed with AES-256-GCM under the master key, bound to 'escrow_webhook:<partner_id>'.
  secret_sealed bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
