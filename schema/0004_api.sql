-- The REST API (/api/v1): bearer tokens, per-bucket deduplication mode, and content lookup by digest.
--
-- API tokens: `dpt_<id>_<secret>`. The id is public (it names the token in lists and logs); only
-- SHA-256(secret) is stored, so a database dump reveals no usable token.
CREATE TABLE api_tokens (
    id           text PRIMARY KEY CHECK (id ~ '^[a-z0-9]{12}$'),
    user_id      text NOT NULL REFERENCES users (id),
    name         text NOT NULL DEFAULT '',
    secret_hash  bytea NOT NULL CHECK (length(secret_hash) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

-- Deduplication is per bucket: on by default; off for scratch buckets where write speed matters more than
-- space. A blob written into a bucket without deduplication is private to that write (shared = false): it
-- neither reuses a stored blob nor becomes one that later writes reuse. Identity stays (sha256, size)
-- among shared blobs only.
ALTER TABLE buckets ADD COLUMN dedup boolean NOT NULL DEFAULT true;
ALTER TABLE blobs ADD COLUMN shared boolean NOT NULL DEFAULT true;
DROP INDEX blobs_content;
CREATE UNIQUE INDEX blobs_content ON blobs (sha256, size) WHERE shared;
CREATE INDEX blobs_private_content ON blobs (sha256, size) WHERE NOT shared;

-- Upload avoidance looks objects up by their whole-object SHA-256.
CREATE INDEX object_versions_sha256 ON object_versions (sha256, size) WHERE sha256 IS NOT NULL;
