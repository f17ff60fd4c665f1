-- Server-side encryption (SSE-S3 and SSE-C; docs/ARCHITECTURE.md "Server-side encryption").
--
-- blobs.sealed: how the blob's bytes are stored. NULL = plaintext; 'master' = sealed format
-- (storage/sealed) with its data key wrapped by the server's SSE master key; 'customer' = wrapped by a key
-- derived from the customer's SSE-C key. A sealed blob is never shared (shared = false): encrypted content
-- does not deduplicate, neither with plaintext nor with other encrypted blobs.
ALTER TABLE blobs ADD COLUMN sealed text CHECK (sealed IN ('master', 'customer'));
ALTER TABLE blobs ADD CONSTRAINT blobs_sealed_private CHECK (sealed IS NULL OR NOT shared);

-- The encryption a version (and an upload in progress) was written with, as S3 reports it: 'AES256' for
-- SSE-S3, 'SSE-C' for customer keys; NULL = none. sse_key_check is, for SSE-C, a random 16-byte salt followed
-- by HMAC-SHA256(salt, customer key): later requests must present the same key; the key is never stored.
ALTER TABLE object_versions ADD COLUMN sse text CHECK (sse IN ('AES256', 'SSE-C'));
ALTER TABLE object_versions ADD COLUMN sse_key_check bytea;
ALTER TABLE multipart_uploads ADD COLUMN sse text CHECK (sse IN ('AES256', 'SSE-C'));
ALTER TABLE multipart_uploads ADD COLUMN sse_key_check bytea;

-- Default bucket encryption (Put/Get/DeleteBucketEncryption): the SSEAlgorithm writes without an
-- x-amz-server-side-encryption header get ('AES256'); NULL = none. Changing it updates the row, so schema
-- 0012's trigger drops the bucket from every lookup cache.
ALTER TABLE buckets ADD COLUMN encryption text CHECK (encryption IN ('AES256'));
