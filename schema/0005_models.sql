-- The model registry: teams with roles, models bound to a bucket prefix, immutable numbered versions that
-- hold their own references to content, movable aliases, and the approval workflow's history.
--
-- A version's files are copies of the object rows' references (model_file_segments take blob references
-- like object_segments do), so no later change to the working prefix can alter or remove a version's
-- bytes. Blob refcount = object_segments + multipart_part_segments + model_file_segments rows.

CREATE TABLE teams (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name              text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
    created_at        timestamptz NOT NULL DEFAULT now(),
    -- The default approval policy of the team's models (a model may override each field).
    required_approvals integer NOT NULL DEFAULT 1 CHECK (required_approvals BETWEEN 1 AND 10),
    approver_role     text NOT NULL DEFAULT 'maintainer'
                      CHECK (approver_role IN ('reader', 'writer', 'maintainer', 'admin')),
    protected_aliases text[] NOT NULL DEFAULT '{production}'
);

CREATE TABLE team_members (
    team_id  bigint NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id  text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role     text NOT NULL CHECK (role IN ('reader', 'writer', 'maintainer', 'admin')),
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

CREATE TABLE models (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    team_id            bigint NOT NULL REFERENCES teams (id),
    name               text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,127}$'),
    bucket_id          bigint NOT NULL REFERENCES buckets (id),
    prefix             text COLLATE "C" NOT NULL,
    description        text NOT NULL DEFAULT '',
    -- Policy overrides; NULL = the team's default.
    required_approvals integer CHECK (required_approvals BETWEEN 1 AND 10),
    approver_role      text CHECK (approver_role IN ('reader', 'writer', 'maintainer', 'admin')),
    protected_aliases  text[],
    next_version       integer NOT NULL DEFAULT 1,
    revision           bigint NOT NULL DEFAULT 1, -- the ETag of the model resource
    created_by         text NOT NULL REFERENCES users (id),
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (team_id, name)
);

CREATE TABLE model_versions (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    model_id    bigint NOT NULL REFERENCES models (id),
    number      integer NOT NULL CHECK (number >= 1),
    label       text CHECK (label ~ '^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$' AND label !~ '^[0-9]+$'),
    state       text NOT NULL DEFAULT 'draft'
                CHECK (state IN ('draft', 'pending', 'approved', 'rejected', 'deprecated', 'archived')),
    description text NOT NULL DEFAULT '',
    framework   text NOT NULL DEFAULT '',
    format      text NOT NULL DEFAULT '',
    parent      integer,
    run_url     text NOT NULL DEFAULT '',
    labels      jsonb NOT NULL DEFAULT '{}',
    metrics     jsonb NOT NULL DEFAULT '{}',
    file_count  bigint NOT NULL DEFAULT 0,
    total_bytes bigint NOT NULL DEFAULT 0,
    created_by  text NOT NULL REFERENCES users (id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (model_id, number),
    UNIQUE (model_id, label)
);

CREATE TABLE model_files (
    version_id   bigint NOT NULL REFERENCES model_versions (id),
    path         text COLLATE "C" NOT NULL,
    size         bigint NOT NULL,
    sha256       bytea,  -- filled after the commit for multipart objects whose digest was not known yet
    etag         text NOT NULL,
    content_type text,
    PRIMARY KEY (version_id, path)
);

CREATE TABLE model_file_segments (
    version_id  bigint NOT NULL,
    path        text COLLATE "C" NOT NULL,
    ordinal     integer NOT NULL,
    blob_id     bigint NOT NULL REFERENCES blobs (id),
    blob_offset bigint NOT NULL DEFAULT 0,
    length      bigint NOT NULL,
    PRIMARY KEY (version_id, path, ordinal),
    FOREIGN KEY (version_id, path) REFERENCES model_files (version_id, path)
);
CREATE INDEX model_file_segments_blob ON model_file_segments (blob_id);

CREATE TABLE model_aliases (
    model_id   bigint NOT NULL REFERENCES models (id),
    name       text NOT NULL CHECK (name ~ '^[A-Za-z][A-Za-z0-9._-]{0,62}$'),
    version_id bigint NOT NULL REFERENCES model_versions (id),
    updated_by text NOT NULL REFERENCES users (id),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (model_id, name)
);

-- Every transition, with who, when and why: created, submitted, approved (one row per approval),
-- rejected, deprecated, archived, alias_set, alias_deleted.
CREATE TABLE model_events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    model_id   bigint NOT NULL REFERENCES models (id),
    version_id bigint REFERENCES model_versions (id),
    action     text NOT NULL,
    actor      text NOT NULL REFERENCES users (id),
    comment    text NOT NULL DEFAULT '',
    from_state text,
    to_state   text,
    details    jsonb NOT NULL DEFAULT '{}',
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX model_events_model ON model_events (model_id, id);
CREATE INDEX model_events_version ON model_events (version_id, id);
