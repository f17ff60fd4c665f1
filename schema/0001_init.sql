-- Depot registry, version 1: identities, buckets, content (blobs) and object versions.
--
-- Layout decisions (see DESIGN.md):
-- * Keys are `text COLLATE "C"` so ORDER BY and range scans follow UTF-8 byte order, as S3 lists keys.
-- * An object version is a manifest of segments (blob, offset, length); blobs are immutable and shared.
-- * Every published change takes a number from `commit_seq`; a version row records the number that created
--   it and the one that superseded it. "Current" = superseded_seq IS NULL. Snapshots are sequence numbers.
-- * blobs.(sha256, size) is unique: identical content is stored once (deduplication).

CREATE TABLE users (
    id           text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$'),
    display_name text NOT NULL,
    email        text,
    is_admin     boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE access_keys (
    access_key_id text PRIMARY KEY CHECK (access_key_id ~ '^[A-Za-z0-9]{3,128}$'),
    user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The secret sealed with the server key (AES-256-GCM); SigV4 needs the plain secret to verify.
    secret_sealed bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    revoked_at    timestamptz
);
CREATE INDEX access_keys_user ON access_keys (user_id);

CREATE SEQUENCE commit_seq;

CREATE TABLE buckets (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    owner_id   text NOT NULL REFERENCES users (id),
    region     text NOT NULL,
    versioning text NOT NULL DEFAULT 'unversioned'
               CHECK (versioning IN ('unversioned', 'enabled', 'suspended')),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE blobs (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    store_id   text NOT NULL UNIQUE,          -- the blob store's id
    size       bigint NOT NULL CHECK (size >= 0),
    sha256     bytea NOT NULL,
    md5        bytea NOT NULL,
    refcount   bigint NOT NULL DEFAULT 0 CHECK (refcount >= 0),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX blobs_content ON blobs (sha256, size);

CREATE TABLE object_versions (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bucket_id           bigint NOT NULL REFERENCES buckets (id),
    key                 text COLLATE "C" NOT NULL,
    version_id          text NOT NULL,          -- 'null' outside versioning, as S3 reports it
    created_seq         bigint NOT NULL,
    superseded_seq      bigint,                 -- NULL while this is the key's current version
    is_delete_marker    boolean NOT NULL DEFAULT false,
    size                bigint NOT NULL DEFAULT 0,
    etag                text NOT NULL DEFAULT '',  -- without quotes
    sha256              bytea,                  -- whole-object content digest when known
    owner_id            text NOT NULL REFERENCES users (id),
    last_modified       timestamptz NOT NULL DEFAULT now(),
    content_type        text,
    content_encoding    text,
    content_disposition text,
    content_language    text,
    cache_control       text,
    expires             text,
    user_metadata       jsonb NOT NULL DEFAULT '[]',  -- [[name, value], ...] in request order
    parts_count         integer
);
CREATE UNIQUE INDEX object_versions_current ON object_versions (bucket_id, key) WHERE superseded_seq IS NULL;
CREATE INDEX object_versions_history ON object_versions (bucket_id, key, created_seq DESC);

CREATE TABLE object_segments (
    version_row bigint NOT NULL REFERENCES object_versions (id) ON DELETE CASCADE,
    ordinal     integer NOT NULL,
    blob_id     bigint NOT NULL REFERENCES blobs (id),
    blob_offset bigint NOT NULL DEFAULT 0,
    length      bigint NOT NULL,
    PRIMARY KEY (version_row, ordinal)
);
CREATE INDEX object_segments_blob ON object_segments (blob_id);
