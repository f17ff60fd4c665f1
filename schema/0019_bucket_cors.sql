-- Bucket CORS configurations (PutBucketCors / GetBucketCors / DeleteBucketCors): the configuration as
-- GetBucketCors returns it, validated and re-serialized by depotd (s3/cors.cpp); NULL when the bucket has
-- none. Changing it updates the row, so schema 0012's trigger drops the bucket from every lookup cache.
ALTER TABLE buckets ADD COLUMN cors text;
