-- Fault injection for the sandbox bank, switched on by tests (and by partners exploring failure
-- paths): the share of requests it drops without an answer, answers with a 500, or processes and
-- then loses the answer of; and a delay before every answer.
CREATE TABLE sandbox_bank.faults (
  id integer PRIMARY KEY CHECK (id = 1),
  no_answer_rate numeric NOT NULL DEFAULT 0 CHECK (no_answer_rate BETWEEN 0 AND 1),
  error_rate numeric NOT NULL DEFAULT 0 CHECK (error_rate BETWEEN 0 AND 1),
  lost_response_rate numeric NOT NULL DEFAULT 0 CHECK (lost_response_rate BETWEEN 0 AND 1),
  delay_ms integer NOT NULL DEFAULT 0 CHECK (delay_ms BETWEEN 0 AND 60000),
  updated_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO sandbox_bank.faults (id) VALUES (1);
