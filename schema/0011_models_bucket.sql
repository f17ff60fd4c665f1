-- Bucket lookups report whether any model lives in the bucket (EXISTS over models.bucket_id), so a GET from
-- a bucket without models skips the query that decides whether the download is a model download. Both that
-- query and the EXISTS look models up by bucket.
CREATE INDEX models_bucket ON models (bucket_id);
