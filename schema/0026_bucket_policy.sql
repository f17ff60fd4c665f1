-- Bucket policies (issue 27; auth/bucket_policy.hpp): the JSON document PutBucketPolicy stored, as the client
-- sent it (GetBucketPolicy returns it unchanged); NULL when the bucket has none. It is read with the bucket's
-- row (registry::bucket_repository, and so from the lookup cache, parsed once), so evaluating a policy costs
-- no query of its own. Changing it updates the row: schema 0012's trigger drops the bucket from every cache.
ALTER TABLE buckets ADD COLUMN policy text CHECK (octet_length(policy) <= 20480);
