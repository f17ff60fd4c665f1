-- Browser sessions of the web console (/ui/). A person signs in with an access key and its secret or with an
-- API token (POST /api/v1/sessions); the browser then holds `dps_<id>_<secret>` in an HttpOnly cookie. Only
-- SHA-256(secret) is stored, as for API tokens. A session acts as the credential it was opened with: it
-- carries that credential's scope, and stops working as soon as the credential is revoked or expires (the
-- lookup joins it), when the session expires, or when it is revoked (sign-out). The CSRF token is not a
-- credential on its own (it is useless without the cookie) and is kept as it is, so that a reloaded page can
-- ask for it again.
CREATE TABLE console_sessions (
    id            text PRIMARY KEY CHECK (id ~ '^[a-z0-9]{16}$'),
    user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    secret_hash   bytea NOT NULL CHECK (length(secret_hash) = 32),
    csrf_token    text NOT NULL CHECK (csrf_token ~ '^[A-Za-z0-9]{32}$'),
    access_key_id text REFERENCES access_keys (access_key_id) ON DELETE CASCADE,
    token_id      text REFERENCES api_tokens (id) ON DELETE CASCADE,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    revoked_at    timestamptz,
    CHECK ((access_key_id IS NULL) <> (token_id IS NULL))
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at) WHERE revoked_at IS NULL;
