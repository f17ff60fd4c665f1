-- S3 Object Lock (WORM): a bucket's Object Lock switch and default retention, and each version's retention
-- (mode, retain-until date) and legal hold.
--
-- Object Lock needs versioning Enabled and, once on, stays on (so versioning can no longer be suspended).
-- A new version (not a delete marker) of an Object Lock bucket that names no retention takes the bucket's
-- default retention: the version insert (registry/versions.cpp) computes it from these columns, so every
-- way of creating a version (S3, REST, Hugging Face, restores) gets it.
ALTER TABLE buckets ADD COLUMN object_lock boolean NOT NULL DEFAULT false;
ALTER TABLE buckets ADD COLUMN lock_default_mode text CHECK (lock_default_mode IN ('GOVERNANCE', 'COMPLIANCE'));
ALTER TABLE buckets ADD COLUMN lock_default_days integer CHECK (lock_default_days > 0);
ALTER TABLE buckets ADD COLUMN lock_default_years integer CHECK (lock_default_years > 0);

-- lock_mode and lock_until both or neither; legal_hold NULL until one was set (GetObjectLegalHold answers
-- NoSuchObjectLockConfiguration then).
ALTER TABLE object_versions ADD COLUMN lock_mode text CHECK (lock_mode IN ('GOVERNANCE', 'COMPLIANCE'));
ALTER TABLE object_versions ADD COLUMN lock_until timestamptz;
ALTER TABLE object_versions ADD COLUMN legal_hold boolean;
ALTER TABLE object_versions ADD CONSTRAINT object_versions_lock_pair
    CHECK ((lock_mode IS NULL) = (lock_until IS NULL));

-- The lock headers of CreateMultipartUpload, for the version CompleteMultipartUpload creates.
ALTER TABLE multipart_uploads ADD COLUMN lock_mode text CHECK (lock_mode IN ('GOVERNANCE', 'COMPLIANCE'));
ALTER TABLE multipart_uploads ADD COLUMN lock_until timestamptz;
ALTER TABLE multipart_uploads ADD COLUMN legal_hold boolean;

-- The last line of defence: whatever path removes a version (deletes it, or purges it behind a snapshot)
-- or shortens its retention, the database refuses while the version is locked. A legal hold and COMPLIANCE
-- retention hold for everyone; GOVERNANCE retention gives way only inside a transaction that set
-- depot.bypass_governance (registry/object_lock.cpp, after auth allowed the bypass). The registry checks the
-- same rules first and answers S3's errors; this trigger turns a path that forgot into a failed transaction
-- instead of a lost version.
CREATE FUNCTION object_version_lock_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bypass boolean := coalesce(current_setting('depot.bypass_governance', true), '') = 'on';
BEGIN
    IF OLD.purged OR OLD.is_delete_marker THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    IF TG_OP = 'DELETE' OR NEW.purged THEN
        IF coalesce(OLD.legal_hold, false) OR (OLD.lock_until > now() AND
                (OLD.lock_mode = 'COMPLIANCE' OR NOT bypass)) THEN
            RAISE EXCEPTION 'object version % is locked (Object Lock)', OLD.id USING ERRCODE = 'DP423';
        END IF;
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    IF OLD.lock_until > now() AND (NEW.lock_until IS NULL OR NEW.lock_until < OLD.lock_until OR
            NEW.lock_mode IS DISTINCT FROM OLD.lock_mode) AND
            (OLD.lock_mode = 'COMPLIANCE' OR NOT bypass) THEN
        RAISE EXCEPTION 'object version % is locked (Object Lock)', OLD.id USING ERRCODE = 'DP423';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER object_versions_lock_guard BEFORE DELETE OR UPDATE OF purged, lock_mode, lock_until
    ON object_versions FOR EACH ROW EXECUTE FUNCTION object_version_lock_guard();
