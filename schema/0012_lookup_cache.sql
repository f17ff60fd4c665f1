-- depotd keeps the access keys and buckets that every S3 request starts by looking up in memory (see
-- src/registry/lookup_cache.hpp). These triggers tell every depotd, through NOTIFY on the channel
-- depot_cache (delivered at commit, to every session listening), which cached row changed, whoever changed
-- it: another depotd, depotctl or an operator with psql. Payloads: 'key:<access key id>',
-- 'bucket:<bucket name>', or 'all'. Inserts of keys and buckets need no notice: only rows found are cached.
CREATE FUNCTION depot_cache_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'access_keys' THEN
        PERFORM pg_notify('depot_cache', 'key:' || OLD.access_key_id);
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

CREATE TRIGGER access_keys_cache AFTER UPDATE OR DELETE ON access_keys
    FOR EACH ROW EXECUTE FUNCTION depot_cache_notify();
CREATE TRIGGER buckets_cache AFTER UPDATE OR DELETE ON buckets
    FOR EACH ROW EXECUTE FUNCTION depot_cache_notify();
CREATE TRIGGER models_cache AFTER INSERT OR DELETE OR UPDATE OF bucket_id ON models
    FOR EACH ROW EXECUTE FUNCTION depot_cache_notify();
CREATE TRIGGER users_cache AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION depot_cache_notify();
