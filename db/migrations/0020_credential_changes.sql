-- Any change to a partner or its credentials is announced on the 'rail_credentials_changed'
-- channel when it commits, whoever makes it (the API, the CLI, an operator's SQL): API processes
-- cache authenticated credentials and forget them all on this notice (src/partners/credential-cache.ts).
CREATE FUNCTION rail_notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rail_credentials_changed', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;

CREATE TRIGGER partner_credentials_changed AFTER UPDATE OR DELETE OR TRUNCATE ON partner_credentials
  FOR EACH STATEMENT EXECUTE FUNCTION rail_notify_credentials_changed();

CREATE TRIGGER partners_changed AFTER UPDATE OR DELETE OR TRUNCATE ON partners
  FOR EACH STATEMENT EXECUTE FUNCTION rail_notify_credentials_changed();
