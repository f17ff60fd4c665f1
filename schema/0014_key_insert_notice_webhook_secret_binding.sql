-- depotd now also remembers, briefly, access key ids that were looked up and not found (so a client sending
-- unknown keys costs one query per key id, not one per request; src/registry/lookup_cache.hpp). A key
-- created later with such an id (depotctl key create --access-key) must drop that memory in every depotd:
-- the access_keys trigger of 0012 now also fires on INSERT, with the new row's id.
CREATE OR REPLACE FUNCTION depot_cache_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'access_keys' THEN
        IF TG_OP = 'INSERT' THEN
            PERFORM pg_notify('depot_cache', 'key:' || NEW.access_key_id);
        ELSE
            PERFORM pg_notify('depot_cache', 'key:' || OLD.access_key_id);
        END IF;
    ELSIF TG_TABLE_NAME = 'buckets' THEN
        PERFORM pg_notify('depot_cache', 'bucket:' || OLD.name);
        IF TG_OP = 'UPDATE' AND NEW.name <> OLD.name THEN
            PERFORM pg_notify('depot_cache', 'bucket:' || NEW.name);
        END IF;
    ELSIF TG_TABLE_NAME = 'models' THEN
        -- A bucket's first model changes what a GET from it records (model.download).
        IF TG_OP <> 'INSERT' THEN
            PERFORM pg_notify('depot_cache', 'bucket:' || name) FROM buckets WHERE id = OLD.bucket_id;
        END IF;
        IF TG_OP <> 'DELETE' THEN
            PERFORM pg_notify('depot_cache', 'bucket:' || name) FROM buckets WHERE id = NEW.bucket_id;
        END IF;
    ELSE
        -- users: display names appear in cached keys and buckets; rare enough to drop everything.
        PERFORM pg_notify('depot_cache', 'all');
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER access_keys_cache ON access_keys;
CREATE TRIGGER access_keys_cache AFTER INSERT OR UPDATE OR DELETE ON access_keys
    FOR EACH ROW EXECUTE FUNCTION depot_cache_notify();

-- Webhook signing secrets were sealed with one constant associated data, so a sealed secret copied onto
-- another subscription's row opened there. They are now sealed with the subscription id as associated
-- data (src/registry/webhook_repository.cpp). A migration cannot unseal (the server key is not in the
-- database): rows sealed the old way keep secret_bound = false until depotd, at its start, re-seals them
-- and sets it. Rows created by this schema on are sealed bound.
ALTER TABLE webhook_subscriptions ADD COLUMN secret_bound boolean NOT NULL DEFAULT false;
