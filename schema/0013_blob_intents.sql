-- Intents: pieces of a body still arriving. With deduplication on, a long body is stored as 8 MiB blobs,
-- each committed to the blob store as soon as it is full, while the `blobs` rows naming them are written
-- only when the whole body has arrived and is published. Until then a piece is named by its intent row, so
-- that the blob collector (which removes committed blobs no row names) never takes it, however slowly the
-- body arrives. See src/registry/content.hpp.
--
-- * The row is written before the piece is committed, and deleted by the transaction that publishes the
--   body (which fails, leaving no version, when any of its rows is gone), or when the write fails.
-- * `owner` is the depotd process that receives the body (a random token per process start), and
--   `expires_at` a lease that process renews for all its rows every few seconds. A row past `expires_at`
--   belongs to a process that crashed or lost the database: the collector deletes it, and the piece is
--   then an ordinary unreferenced blob, removed after the grace age.
CREATE TABLE blob_intents (
    store_id   text PRIMARY KEY,    -- the blob store's id of the piece
    owner      text NOT NULL,       -- the depotd process writing it
    upload     text NOT NULL,       -- the body it is a piece of (one write)
    expires_at timestamptz NOT NULL
);
CREATE INDEX blob_intents_owner ON blob_intents (owner);
CREATE INDEX blob_intents_upload ON blob_intents (upload);
CREATE INDEX blob_intents_expires ON blob_intents (expires_at);
