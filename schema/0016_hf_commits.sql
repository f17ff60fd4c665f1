-- Commit ids of model versions for the Hugging Face Hub-compatible read API (src/server/hf/). Hub clients
-- key their caches by a 40-hex commit id and ask for files "at" that commit; a version's id is derived from
-- its frozen manifest (model, number, and each file's path, size and SHA-256) the first time the API
-- meets the version, and stored so that it never changes afterwards (a multipart file's digest filled in
-- later must not move it). Versions never change, so one row per version is final.
CREATE TABLE model_version_commits (
    version_id bigint PRIMARY KEY REFERENCES model_versions (id),
    model_id   bigint NOT NULL REFERENCES models (id),
    commit_id  text NOT NULL CHECK (commit_id ~ '^[0-9a-f]{40}$'),
    UNIQUE (model_id, commit_id)
);
