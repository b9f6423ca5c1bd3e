-- Each server instance keeps signed-in sessions in memory for a few seconds (see
-- apps/server/src/modules/accounts/session-cache.ts). Whatever changes a session or a user, from
-- any process (another instance, a worker, the admin scripts, psql), tells every instance at
-- commit, so a sign-out, a password change or a deactivation takes effect on all of them at once.
-- Payloads: "s:<session id>", "u:<user id>", or "*" (forget everything) for large changes.
-- Statement triggers, so the hourly sweep of thousands of expired sessions sends one notice.

CREATE FUNCTION daybook_sessions_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT count(*) FROM old_rows) > 100 THEN
    PERFORM pg_notify('daybook_auth', '*');
  ELSE
    PERFORM pg_notify('daybook_auth', 's:' || id) FROM old_rows;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION daybook_users_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT count(*) FROM old_rows) > 100 THEN
    PERFORM pg_notify('daybook_auth', '*');
  ELSE
    PERFORM pg_notify('daybook_auth', 'u:' || id) FROM old_rows;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER sessions_changed_update AFTER UPDATE ON sessions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION daybook_sessions_changed();
CREATE TRIGGER sessions_changed_delete AFTER DELETE ON sessions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION daybook_sessions_changed();
CREATE TRIGGER users_changed_update AFTER UPDATE ON users
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION daybook_users_changed();
CREATE TRIGGER users_changed_delete AFTER DELETE ON users
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION daybook_users_changed();

-- TRUNCATE fires no UPDATE or DELETE trigger ("sign everyone out" after a leak): forget everything.
CREATE FUNCTION daybook_auth_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('daybook_auth', '*');
  RETURN NULL;
END $$;
CREATE TRIGGER sessions_changed_truncate AFTER TRUNCATE ON sessions
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_auth_truncated();
CREATE TRIGGER users_changed_truncate AFTER TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_auth_truncated();
