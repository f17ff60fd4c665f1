-- The audit log and scoped credentials.
--
-- Audit log: an append-only, hash-chained record of every state change and every model download.
-- * Rows are written only through audit_append(), inside the transaction of the change they record, so a change
--   never commits without its row (and a rolled-back change leaves none).
-- * Chain: hash = sha256(prev_hash || convert_to(audit_canonical(row), 'UTF8')), prev_hash = the previous
--   row's hash (32 zero bytes before the first row ever written). audit_append() takes the one-row audit_head
--   FOR UPDATE, so ids are assigned in chain order and concurrent writers queue on the head until they commit.
-- * Append-only: triggers refuse UPDATE and TRUNCATE of audit_log always, and DELETE except inside
--   audit_archive(). depotd connects as the schema's owner role in the documented setup, so these triggers (not
--   privileges) are what stops depotd's role from changing rows; an owner or superuser can still disable
--   them, which is what `depotctl audit verify` detects: any edit breaks the chain at the edited row.
-- * Retention: audit_archive(through_id) deletes the rows up to and including through_id (after depotctl has
--   copied them into a bucket) and keeps the last deleted row's id and hash in audit_head as the anchor the
--   first remaining row must chain to, so what remains still verifies.

CREATE TABLE audit_log (
    id          bigint PRIMARY KEY,
    at          timestamptz NOT NULL,
    actor       text NOT NULL,          -- user id, or 'system' for work no request caused
    credential  text NOT NULL DEFAULT '', -- access key id or 'token:<id>'; never a secret
    team        text NOT NULL DEFAULT '',
    action      text NOT NULL,          -- e.g. object.put, model.alias.set, s3.PutObject (denials)
    resource    text NOT NULL,          -- e.g. bucket/key, team/model:version
    outcome     text NOT NULL CHECK (outcome IN ('allowed', 'denied', 'failed')),
    request_id  text NOT NULL DEFAULT '',
    client_addr text NOT NULL DEFAULT '',
    details     jsonb NOT NULL DEFAULT '{}',
    prev_hash   bytea NOT NULL CHECK (length(prev_hash) = 32),
    hash        bytea NOT NULL CHECK (length(hash) = 32)
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor ON audit_log (actor, id);
CREATE INDEX audit_log_team ON audit_log (team, id);

CREATE SEQUENCE audit_log_id;

CREATE TABLE audit_head (
    one         boolean PRIMARY KEY DEFAULT true CHECK (one),
    last_id     bigint NOT NULL DEFAULT 0,
    last_hash   bytea NOT NULL DEFAULT '\x0000000000000000000000000000000000000000000000000000000000000000',
    -- The last archived row: the first remaining row must have id > anchor_id and prev_hash = anchor_hash.
    anchor_id   bigint NOT NULL DEFAULT 0,
    anchor_hash bytea NOT NULL DEFAULT '\x0000000000000000000000000000000000000000000000000000000000000000'
);
INSERT INTO audit_head DEFAULT VALUES;

-- The text a row's hash covers: every column but the hashes, as a JSON array (jsonb's text form is canonical:
-- object keys sorted, no insignificant space), the time in UTC with microseconds.
CREATE FUNCTION audit_canonical(r audit_log) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_array(r.id, to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), r.actor,
                             r.credential, r.team, r.action, r.resource, r.outcome, r.request_id,
                             r.client_addr, r.details)::text
$$;

CREATE FUNCTION audit_append(p_actor text, p_credential text, p_team text, p_action text, p_resource text,
                             p_outcome text, p_request_id text, p_client_addr text, p_details jsonb)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    head audit_head;
    r audit_log;
BEGIN
    SELECT * INTO head FROM audit_head FOR UPDATE;
    r.id := nextval('audit_log_id');
    r.at := clock_timestamp();
    r.actor := coalesce(p_actor, '');
    r.credential := coalesce(p_credential, '');
    r.team := coalesce(p_team, '');
    r.action := p_action;
    r.resource := coalesce(p_resource, '');
    r.outcome := p_outcome;
    r.request_id := coalesce(p_request_id, '');
    r.client_addr := coalesce(p_client_addr, '');
    r.details := coalesce(p_details, '{}');
    r.prev_hash := head.last_hash;
    r.hash := sha256(r.prev_hash || convert_to(audit_canonical(r), 'UTF8'));
    INSERT INTO audit_log VALUES (r.*);
    PERFORM set_config('depot.audit_maintenance', 'on', true);
    UPDATE audit_head SET last_id = r.id, last_hash = r.hash;
    PERFORM set_config('depot.audit_maintenance', '', true);
    RETURN r.id;
END
$$;

-- Removes the rows up to and including `through_id` (which must exist) and anchors the chain at it. Returns
-- the number of rows removed.
CREATE FUNCTION audit_archive(through_id bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    anchor audit_log;
    n bigint;
BEGIN
    PERFORM 1 FROM audit_head FOR UPDATE;
    SELECT * INTO anchor FROM audit_log WHERE id = through_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'audit row % does not exist', through_id USING ERRCODE = 'no_data_found';
    END IF;
    PERFORM set_config('depot.audit_maintenance', 'on', true);
    DELETE FROM audit_log WHERE id <= through_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    UPDATE audit_head SET anchor_id = anchor.id, anchor_hash = anchor.hash;
    PERFORM set_config('depot.audit_maintenance', '', true);
    RETURN n;
END
$$;

CREATE FUNCTION audit_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND TG_TABLE_NAME = 'audit_log'
       AND current_setting('depot.audit_maintenance', true) = 'on' THEN
        RETURN OLD;
    END IF;
    IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'audit_head'
       AND current_setting('depot.audit_maintenance', true) = 'on' THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'the audit log is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_head_no_update BEFORE UPDATE OR DELETE ON audit_head
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_head_no_truncate BEFORE TRUNCATE ON audit_head
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();

REVOKE UPDATE, DELETE, TRUNCATE ON audit_log, audit_head FROM PUBLIC;

-- Scoped credentials: NULL = everything the user may do. Otherwise an object with any of
--   read_only (bool), bucket, prefix (a bucket's key prefix), model ("team/model"), alias (an alias of that
--   model), expires handled by expires_at.
-- A scope only narrows what the user's roles allow; it never grants.
ALTER TABLE access_keys ADD COLUMN scope jsonb;
ALTER TABLE api_tokens ADD COLUMN scope jsonb;
