-- Events and their signed deliveries (docs/design.md §9). An event row and its first delivery are written
-- in the transaction of the state change that caused them; the delivery job rides in it too.

CREATE TABLE events (
  id              uuid PRIMARY KEY,
  partner_id      uuid NOT NULL REFERENCES partners (id),
  type            text NOT NULL,
  object_type     text NOT NULL,
  object_id       text NOT NULL,
  -- Exactly the bytes every attempt sends, so each retry carries the same body and signature.
  body            text NOT NULL,
  -- The emitter's explicit target (a per-object callbackUrl); null means the partner's default.
  callback_url    text,
  -- Which secret signs it: the partner's newest callback-signing secret at delivery time, a secret
  -- the emitter sealed (an escrow webhookSecret), or none (no signature header).
  signing         text NOT NULL CHECK (signing IN ('partner', 'sealed', 'none')),
  secret_sealed   bytea,
  secret_bound_to text,
  -- pending | delivered | failed while deliveries run; skipped when there was no callback URL.
  delivery_status text NOT NULL CHECK (delivery_status IN ('pending', 'delivered', 'failed', 'skipped')),
  created_at      timestamptz NOT NULL,
  CHECK ((signing = 'sealed') = (secret_sealed IS NOT NULL AND secret_bound_to IS NOT NULL))
);

-- Lists are newest first per partner; ids are UUIDv7, so id order is creation order.
CREATE INDEX events_partner_id ON events (partner_id, id DESC);
CREATE INDEX events_partner_object ON events (partner_id, object_type, object_id, id DESC);

CREATE TABLE event_deliveries (
  id              uuid PRIMARY KEY,
  -- Order of creation; deliveries of one object to one URL are attempted in this order.
  seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  event_id        uuid NOT NULL REFERENCES events (id),
  partner_id      uuid NOT NULL,
  url             text NOT NULL,
  ordering_key    text NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts_made   integer NOT NULL DEFAULT 0 CHECK (attempts_made >= 0),
  next_attempt_at timestamptz NOT NULL,
  -- A worker that claims an attempt holds it until then; a killed worker's claim simply lapses.
  lease_until     timestamptz,
  last_error      text,
  delivered_at    timestamptz,
  failed_at       timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX event_deliveries_event ON event_deliveries (event_id, seq);
-- The ordering check and the wake-up of the next delivery look here.
CREATE INDEX event_deliveries_pending_order ON event_deliveries (url, ordering_key, seq) WHERE status = 'pending';
-- The sweep finds pending deliveries whose job was lost with a killed worker.
CREATE INDEX event_deliveries_pending_due ON event_deliveries (next_attempt_at) WHERE status = 'pending';

CREATE TABLE event_delivery_attempts (
  delivery_id      uuid NOT NULL REFERENCES event_deliveries (id),
  attempt_number   integer NOT NULL CHECK (attempt_number >= 1),
  url              text NOT NULL,
  started_at       timestamptz NOT NULL,
  duration_ms      integer NOT NULL,
  status_code      integer,
  error            text,
  -- The first bytes of the receiver's answer, for support.
  response_excerpt text,
  PRIMARY KEY (delivery_id, attempt_number)
);

-- A callback URL that answered 410 Gone: deliveries to it stop until the partner sets it again.
CREATE TABLE disabled_callback_urls (
  partner_id  uuid NOT NULL REFERENCES partners (id),
  url         text NOT NULL,
  disabled_at timestamptz NOT NULL,
  reason      text NOT NULL,
  PRIMARY KEY (partner_id, url)
);
