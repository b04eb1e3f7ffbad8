-- A partner's credits newest first (the dashboard's inbound credits list, by status or all):
-- without it the list scans every partner's credits.
CREATE INDEX inbound_credits_by_partner ON inbound_credits (partner_id, id DESC);
