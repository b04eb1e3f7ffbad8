-- Who acted from the dashboard: a sign-in link may name its operator (`rail dashboard link
-- --operator NAME`), the session it opens keeps the name, and every action records it. Actions
-- that make something new (a sandbox credit, a float funding) have no object of their own before
-- they run: their object id may be empty, what they made goes into their detail.
ALTER TABLE dashboard_links ADD COLUMN operator text CHECK (length(operator) BETWEEN 1 AND 100 AND operator !~ '[[:cntrl:]]');
ALTER TABLE dashboard_sessions ADD COLUMN operator text CHECK (length(operator) BETWEEN 1 AND 100 AND operator !~ '[[:cntrl:]]');
ALTER TABLE dashboard_actions ADD COLUMN operator text CHECK (length(operator) BETWEEN 1 AND 100 AND operator !~ '[[:cntrl:]]');
ALTER TABLE dashboard_actions ALTER COLUMN object_id DROP NOT NULL;
-- The sweep of ended sessions and spent links reads them by expiry.
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
CREATE INDEX dashboard_links_expiry ON dashboard_links (expires_at);
