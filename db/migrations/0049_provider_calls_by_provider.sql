-- A provider's health is read from its recent calls (src/providers/health.ts: the share of its
-- calls over the last five minutes that got no readable answer): by provider, then time.
CREATE INDEX provider_calls_by_provider ON provider_calls (provider, created_at);
