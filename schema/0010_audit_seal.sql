-- The audit chain is linked after commit ("sealed") instead of inside every writing transaction.
--
-- Before: audit_append() took the one-row audit_head FOR UPDATE and held it to the end of the caller's
-- transaction, so every writing transaction in the installation queued behind the previous one's commit
-- (WAL flush included): measured with pgbench, 32 clients, fsync on: 478 transactions/s with the append,
-- 5,757 without. PostgreSQL's group commit could never batch two writers.
--
-- Now:
-- * audit_append() inserts the row with prev_hash and hash NULL ("unsealed") under a SHARED transaction
--   advisory lock (class 'AUDT') and takes nothing else, so appenders run and commit concurrently.
-- * audit_horizon(wait_ms), called on its own (autocommit), takes the same advisory lock EXCLUSIVELY for an instant:
--   once granted, no transaction that appended a row is still in flight, and every later append draws a
--   larger id (ids are drawn after the shared lock). It returns the largest id drawn so far: every row with
--   an id at or below it is committed or will never exist.
-- * audit_seal(horizon) links the unsealed rows up to that horizon in id order, exactly as audit_append()
--   used to (hash = sha256(prev_hash || audit_canonical(row))), and moves audit_head. Chain order is id
--   order, so verification, export and archive read the chain as before.
-- depotd runs horizon + seal every --audit-seal-interval (default 100 ms). Unsealed rows are always the
-- newest ones (ids above audit_head.last_id); `depotctl audit verify` reports how many await sealing.
-- Rows stay append-only: the one UPDATE ever allowed on audit_log is the sealer filling prev_hash and hash
-- of an unsealed row, content unchanged.

ALTER TABLE audit_log ALTER COLUMN prev_hash DROP NOT NULL, ALTER COLUMN hash DROP NOT NULL;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_sealed_whole CHECK ((prev_hash IS NULL) = (hash IS NULL));

CREATE OR REPLACE FUNCTION audit_append(p_actor text, p_credential text, p_team text, p_action text,
                                        p_resource text, p_outcome text, p_request_id text,
                                        p_client_addr text, p_details jsonb)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    new_id bigint;
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1096107092, 0);
    new_id := nextval('audit_log_id');
    INSERT INTO audit_log (id, at, actor, credential, team, action, resource, outcome, request_id,
                           client_addr, details, prev_hash, hash)
    VALUES (new_id, clock_timestamp(), coalesce(p_actor, ''), coalesce(p_credential, ''),
            coalesce(p_team, ''), p_action, coalesce(p_resource, ''), p_outcome,
            coalesce(p_request_id, ''), coalesce(p_client_addr, ''), coalesce(p_details, '{}'), NULL, NULL);
    RETURN new_id;
END
$$;

-- Call in a transaction of its own (it holds the exclusive lock until that transaction ends). Waits at most
-- `wait_ms` for the appenders in flight (a transaction that appended long before its commit would otherwise
-- hold every new appender back behind this lock) and fails with lock_not_available after that.
CREATE FUNCTION audit_horizon(wait_ms integer) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    seq record;
BEGIN
    PERFORM set_config('lock_timeout', wait_ms || 'ms', true);
    PERFORM pg_advisory_xact_lock(1096107092, 0);
    SELECT last_value, is_called INTO seq FROM audit_log_id;
    RETURN CASE WHEN seq.is_called THEN seq.last_value ELSE seq.last_value - 1 END;
END
$$;

-- Links the unsealed rows with ids up to `horizon` (from audit_horizon()). Returns how many it sealed; 0 when
-- another sealer holds the head.
CREATE FUNCTION audit_seal(horizon bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    head audit_head;
    r audit_log;
    prev bytea;
    last bigint;
    n bigint := 0;
BEGIN
    SELECT * INTO head FROM audit_head FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    prev := head.last_hash;
    last := head.last_id;
    PERFORM set_config('depot.audit_maintenance', 'on', true);
    FOR r IN SELECT * FROM audit_log WHERE id > head.last_id AND id <= horizon ORDER BY id LOOP
        r.prev_hash := prev;
        r.hash := sha256(prev || convert_to(audit_canonical(r), 'UTF8'));
        UPDATE audit_log SET prev_hash = r.prev_hash, hash = r.hash WHERE id = r.id;
        prev := r.hash;
        last := r.id;
        n := n + 1;
    END LOOP;
    IF n > 0 THEN
        UPDATE audit_head SET last_id = last, last_hash = prev;
    END IF;
    PERFORM set_config('depot.audit_maintenance', '', true);
    RETURN n;
END
$$;

-- Archiving stops at the sealed part of the chain: an unsealed row has no hash to anchor the rest to.
CREATE OR REPLACE FUNCTION audit_archive(through_id bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    head audit_head;
    anchor audit_log;
    n bigint;
BEGIN
    SELECT * INTO head FROM audit_head FOR UPDATE;
    SELECT * INTO anchor FROM audit_log WHERE id = through_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'audit row % does not exist', through_id USING ERRCODE = 'no_data_found';
    END IF;
    IF through_id > head.last_id THEN
        RAISE EXCEPTION 'audit row % is not sealed yet', through_id USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    PERFORM set_config('depot.audit_maintenance', 'on', true);
    DELETE FROM audit_log WHERE id <= through_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    UPDATE audit_head SET anchor_id = anchor.id, anchor_hash = anchor.hash;
    PERFORM set_config('depot.audit_maintenance', '', true);
    RETURN n;
END
$$;

-- The sealer's UPDATE is the only change allowed to a row, and only from unsealed to sealed with the content
-- untouched.
CREATE OR REPLACE FUNCTION audit_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND TG_TABLE_NAME = 'audit_log'
       AND current_setting('depot.audit_maintenance', true) = 'on' THEN
        RETURN OLD;
    END IF;
    -- (Nested: OLD has a hash column only on audit_log, and plpgsql would resolve it for audit_head too.)
    IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'audit_log'
       AND current_setting('depot.audit_maintenance', true) = 'on' THEN
        IF OLD.hash IS NULL AND NEW.hash IS NOT NULL AND audit_canonical(OLD) = audit_canonical(NEW) THEN
            RETURN NEW;
        END IF;
    END IF;
    IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'audit_head'
       AND current_setting('depot.audit_maintenance', true) = 'on' THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'the audit log is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;
