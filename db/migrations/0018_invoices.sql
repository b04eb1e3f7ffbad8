-- Invoices (docs/contracts/collections-and-payouts.md): a bill for an amount, drafted, then published with a virtual account (a
-- composed payment intent) that the customer pays into, partially or in full, or cancelled.
CREATE TABLE invoices (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  reference text NOT NULL CHECK (length(reference) BETWEEN 1 AND 64),
  request_hash text NOT NULL,
  -- draft → published → partially_paid → paid; draft, published and partially_paid → cancelled.
  status text NOT NULL CHECK (status IN ('draft', 'published', 'partially_paid', 'paid', 'cancelled')),
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  description text CHECK (length(description) <= 2000),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  -- What the invoice took of the credits to its account (never more than amount_kobo: an excess goes to triage).
  amount_paid_kobo bigint NOT NULL DEFAULT 0 CHECK (amount_paid_kobo >= 0),
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  customer jsonb,
  due_at timestamptz,
  callback_url text,
  -- The payment intent publishing composed; its virtual account is the invoice's.
  payment_intent_id uuid UNIQUE REFERENCES payment_intents (id),
  creator_metadata jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  status_changed_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz,
  paid_at timestamptz,
  cancelled_at timestamptz,
  CONSTRAINT invoices_one_per_reference UNIQUE (partner_id, reference),
  CONSTRAINT invoices_paid_within_amount CHECK (amount_paid_kobo <= amount_kobo),
  CONSTRAINT invoices_published_has_account CHECK ((payment_intent_id IS NULL) = (published_at IS NULL)),
  CONSTRAINT invoices_draft_unpublished CHECK (status <> 'draft' OR published_at IS NULL),
  CONSTRAINT invoices_paid_when CHECK ((status = 'paid') = (paid_at IS NOT NULL)),
  CONSTRAINT invoices_cancelled_when CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL))
);
CREATE INDEX invoices_by_partner ON invoices (partner_id, id DESC);
CREATE INDEX invoices_by_partner_status ON invoices (partner_id, status, id DESC);
