-- Every call Rail makes to a provider, and its answer: the trail reconciliation starts from.
CREATE TABLE provider_calls (
  id uuid PRIMARY KEY,
  provider text NOT NULL REFERENCES providers (name),
  operation text NOT NULL CHECK (length(operation) <= 64),
  -- The move's reference (or the enquiry's subject), to find every call about one thing.
  reference text CHECK (length(reference) <= 128),
  -- Rail's request id that caused the call, when there was one.
  request_id text CHECK (length(request_id) <= 128),
  -- The provider's answer as Rail classified it: successful, failed, pending or unknown.
  outcome text NOT NULL CHECK (outcome IN ('successful', 'failed', 'pending', 'unknown')),
  http_status integer,
  response_code text CHECK (length(response_code) <= 16),
  -- Why an answer was unknown (timeout, connection reset, 5xx, unparseable body).
  error text CHECK (length(error) <= 500),
  latency_ms integer NOT NULL CHECK (latency_ms >= 0),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX provider_calls_by_reference ON provider_calls (reference, created_at) WHERE reference IS NOT NULL;
