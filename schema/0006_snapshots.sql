-- Snapshots: a named commit sequence number over a bucket, optionally restricted to a key prefix.
--
-- Reading a bucket "as of" snapshot S is a filter on the version rows (0001):
--   created_seq <= S AND (superseded_seq IS NULL OR superseded_seq > S) AND NOT is_delete_marker
-- so creating a snapshot is one constant-size INSERT whatever the number of objects.
--
-- A version row that a snapshot can still see must outlive its removal from the live bucket (an
-- unversioned overwrite or delete, a permanent version delete, a 'null' version replaced while versioning
-- is suspended). Such a row is not deleted but purged: superseded (if it was current) and hidden from every
-- live view (listings, ListObjectVersions, reads by version id), keeping its segments and so its blob
-- references. Deleting a snapshot deletes the purged rows of its bucket that no remaining snapshot sees and
-- drops their references. A row no snapshot sees is deleted at once, as before.
CREATE TABLE snapshots (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bucket_id  bigint NOT NULL REFERENCES buckets (id),
    name       text COLLATE "C" NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$'),
    prefix     text COLLATE "C" NOT NULL DEFAULT '',
    seq        bigint NOT NULL,
    created_by text NOT NULL REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (bucket_id, name)
);
CREATE INDEX snapshots_seq ON snapshots (bucket_id, seq);

ALTER TABLE object_versions ADD COLUMN purged boolean NOT NULL DEFAULT false;
-- Deleting a snapshot visits the purged rows of its bucket only.
CREATE INDEX object_versions_purged ON object_versions (bucket_id) WHERE purged;
