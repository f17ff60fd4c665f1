-- Events and signed webhooks: a transactional outbox, per-team subscriptions, one delivery per (event,
-- subscription) and a record of every attempt.
--
-- * An event row commits in the transaction of the change it describes, together with one delivery row per
--   matching subscription (the fan-out happens at emit time, so a subscription sees the events committed
--   after it was created and never an event from before). The emitting transaction sends NOTIFY
--   depot_events, which wakes the dispatchers of every depotd.
-- * Ordering: events about one model (or one object key) take their `seq` from event_seq while holding a
--   transaction-scoped advisory lock on their ordering key, so `seq` order is commit order within an
--   ordering key: when event k+1 is visible, event k is too. A dispatcher never claims a delivery while an
--   earlier one (lower seq) of the same subscription and ordering key is still pending or in flight.
-- * Claiming: dispatchers take due deliveries with FOR UPDATE SKIP LOCKED and lease them (state
--   'delivering', lease_until); a depotd that dies mid-attempt leaves a lease that expires and the delivery
--   is taken again. Each claim is one numbered attempt, so no two depotd processes send the same attempt.

-- Object events are opt-in per bucket: they are as frequent as writes.
ALTER TABLE buckets ADD COLUMN object_events boolean NOT NULL DEFAULT false;

CREATE SEQUENCE event_seq;

CREATE TABLE events (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- Commit order within ordering_key (see above); also orders unkeyed events roughly by time.
    seq          bigint NOT NULL,
    type         text NOT NULL,
    -- Who may subscribe: model events belong to the model's team; object and snapshot events to a bucket.
    team_id      bigint REFERENCES teams (id),
    model_id     bigint REFERENCES models (id),
    version_id   bigint REFERENCES model_versions (id), -- version events: the manifest is read from it
    bucket_id    bigint,                                -- no foreign key: events outlive deleted buckets
    ordering_key text,                                  -- 'm<model id>', 'o<bucket id>/<key>', or NULL
    payload      jsonb NOT NULL,                        -- the event's `data`
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_team ON events (team_id, id);

CREATE TABLE webhook_subscriptions (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    team_id              bigint NOT NULL REFERENCES teams (id),
    url                  text NOT NULL CHECK (url ~ '^https?://'),
    description          text NOT NULL DEFAULT '',
    -- Empty = every event type the subscription can see.
    event_types          text[] NOT NULL DEFAULT '{}',
    model_id             bigint REFERENCES models (id),
    bucket_id            bigint REFERENCES buckets (id) ON DELETE CASCADE,
    -- Signing secrets ("whsec_<base64>") sealed with the server key. During a rotation the previous secret
    -- keeps signing (a second signature) until previous_expires_at.
    secret_sealed        bytea NOT NULL,
    previous_sealed      bytea,
    previous_expires_at  timestamptz,
    enabled              boolean NOT NULL DEFAULT true,
    disabled_reason      text,
    consecutive_failures integer NOT NULL DEFAULT 0,
    created_by           text NOT NULL REFERENCES users (id),
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_subscriptions_team ON webhook_subscriptions (team_id, id);
CREATE INDEX webhook_subscriptions_bucket ON webhook_subscriptions (bucket_id) WHERE bucket_id IS NOT NULL;

CREATE TABLE webhook_deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id        bigint NOT NULL REFERENCES events (id),
    subscription_id bigint NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    ordering_key    text,
    seq             bigint NOT NULL,
    state           text NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'delivering', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    lease_until     timestamptz,
    last_status     integer,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    UNIQUE (event_id, subscription_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE state IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (subscription_id, ordering_key, seq)
    WHERE state IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, id);

CREATE TABLE webhook_attempts (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id      bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    number           integer NOT NULL,
    instance         text NOT NULL, -- the depotd that sent it (host:pid)
    started_at       timestamptz NOT NULL DEFAULT now(),
    status           integer,       -- HTTP status; NULL when no answer came
    latency_ms       integer NOT NULL DEFAULT 0,
    response_excerpt text NOT NULL DEFAULT '',
    error            text,
    UNIQUE (delivery_id, number)
);

-- The per-team service identity whose access key signs the presigned GET URLs in version events: a team
-- reader, so a URL can only ever read that team's models, whatever event carries it.
CREATE TABLE team_event_keys (
    team_id       bigint PRIMARY KEY REFERENCES teams (id),
    access_key_id text NOT NULL REFERENCES access_keys (access_key_id)
);
