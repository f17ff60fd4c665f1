-- Warm-up jobs: preload a model version into the read cache of every depotd.
--
-- * A job names a frozen version (and the alias it was asked for, if any). It is created by the REST API or,
--   by policy, in the transaction of a version.approved / alias.updated event, and announced with NOTIFY
--   depot_warmups; every depotd also polls the table, so an instance that was down catches up.
-- * Every depotd keeps a row in depot_instances alive (expires_at renewed every poll). A job records the
--   instances that were alive when it was created; it completes (warmup.completed, or warmup.failed when an
--   instance reported errors) once each of them has finished or stopped renewing its row. Instances that
--   start later warm recent jobs too (their caches start empty) and report progress, but fire no event.
-- * Progress is one row per (job, instance).

-- Policy: the events that start a warm-up automatically ('version.approved', 'alias.updated'); a model's
-- own list (NULL = the team's) wins over the team's.
ALTER TABLE teams ADD COLUMN warmup_on text[] NOT NULL DEFAULT '{}';
ALTER TABLE models ADD COLUMN warmup_on text[];

CREATE TABLE depot_instances (
    id         text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);

CREATE TABLE warmup_jobs (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    team_id      bigint NOT NULL REFERENCES teams (id),
    model_id     bigint NOT NULL REFERENCES models (id),
    version_id   bigint NOT NULL REFERENCES model_versions (id),
    alias        text,
    trigger      text NOT NULL CHECK (trigger IN ('api', 'version.approved', 'alias.updated')),
    state        text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'completed', 'failed')),
    instances    text[] NOT NULL, -- alive at creation: the ones the job waits for
    requested_by text NOT NULL REFERENCES users (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz
);
CREATE INDEX warmup_jobs_model ON warmup_jobs (model_id, id);
CREATE INDEX warmup_jobs_recent ON warmup_jobs (created_at);

CREATE TABLE warmup_progress (
    job_id      bigint NOT NULL REFERENCES warmup_jobs (id) ON DELETE CASCADE,
    instance    text NOT NULL,
    state       text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'completed', 'failed')),
    files_total bigint NOT NULL DEFAULT 0,
    files_done  bigint NOT NULL DEFAULT 0,
    bytes_total bigint NOT NULL DEFAULT 0,
    bytes_done  bigint NOT NULL DEFAULT 0,
    errors      bigint NOT NULL DEFAULT 0,
    last_error  text,
    started_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, instance)
);
