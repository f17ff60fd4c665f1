-- Bucket lifecycle configurations (Put/Get/DeleteBucketLifecycleConfiguration): the configuration as
-- GetBucketLifecycleConfiguration returns it, validated and re-serialized by depotd (s3/lifecycle.cpp); NULL
-- when the bucket has none. The cleanup task executes it (registry/lifecycle.cpp), visiting only the buckets
-- that have one.
ALTER TABLE buckets ADD COLUMN lifecycle text;
CREATE INDEX buckets_with_lifecycle ON buckets (id) WHERE lifecycle IS NOT NULL;
